import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool

extension Spool {
    /// Outbox paths with what one `lstat` each says of them (size, mtime), for the owner's
    /// `order`. Runs before the event is sent, never inside a step; a path gone already gets zeros.
    package func queuedFiles(_ paths: [RelativePath]) -> [QueuedFile] {
        zip(paths, fs.statuses(paths, in: directory(.outbox))).map { path, status in
            guard let status else { return QueuedFile(path) }
            return QueuedFile(path, size: status.size, mtimeNanos: status.mtimeNanos)
        }
    }
}
