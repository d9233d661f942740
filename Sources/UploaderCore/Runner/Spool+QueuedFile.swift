import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool

extension Spool {
    /// Outbox paths with what one `lstat` each says of them (size, mtime), for the owner's
    /// `order`. Runs before the event is sent, never inside a step; a path gone already gets zeros.
    package func queuedFiles(_ paths: [RelativePath]) -> [QueuedFile] {
        var files: [QueuedFile] = []
        files.reserveCapacity(paths.count)
        // In stretches, and only the two numbers kept of each lstat: a backlog's statuses (every
        // field) are never in memory, not even a stretch's.
        for start in stride(from: 0, to: paths.count, by: Self.statusStretch) {
            let stretch = Array(paths[start..<min(start + Self.statusStretch, paths.count)])
            let kept = fs.statuses(stretch, in: directory(.outbox)) { status in status.map { ($0.size, $0.mtimeNanos) } }
            for (path, numbers) in zip(stretch, kept) {
                files.append(numbers.map { QueuedFile(path, size: $0.0, mtimeNanos: $0.1) } ?? QueuedFile(path))
            }
        }
        return files
    }

    /// Paths looked up per call of `statuses`: enough for every core to take a share.
    static let statusStretch = 16_384
}
