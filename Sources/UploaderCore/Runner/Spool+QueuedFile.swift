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
        // In stretches: a backlog's statuses (every field of every lstat) never all in memory
        // at once, only the two numbers kept of each.
        for start in stride(from: 0, to: paths.count, by: Self.statusStretch) {
            let stretch = Array(paths[start..<min(start + Self.statusStretch, paths.count)])
            for (path, status) in zip(stretch, fs.statuses(stretch, in: directory(.outbox))) {
                files.append(status.map { QueuedFile(path, size: $0.size, mtimeNanos: $0.mtimeNanos) } ?? QueuedFile(path))
            }
        }
        return files
    }

    /// Paths looked up per call of `statuses`: enough for every core to take a share.
    static let statusStretch = 16_384
}
