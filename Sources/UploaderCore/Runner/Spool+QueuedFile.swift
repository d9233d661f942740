import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool

extension Spool {
    /// Outbox paths with what one `lstat` each says of them (size, mtime), for the owner's
    /// `order`. Runs on the sender's thread, never the owner's; a path gone already gets zeros.
    package func queuedFiles(_ paths: [RelativePath]) -> [QueuedFile] {
        let outbox = directory(.outbox)
        return paths.map { path in
            guard let status = try? fs.status(path, in: outbox) else { return QueuedFile(path) }
            return QueuedFile(path, size: status.size, mtimeNanos: status.mtimeNanos)
        }
    }
}
