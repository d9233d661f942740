import Foundation
import UploaderSupport
import UploaderConfig

/// The file an upload sends, as the transfer layer sees it: an open descriptor and the facts
/// the wire needs. Built by the caller from what it claimed, so nothing in `Transfer/` knows
/// about the spool or the manifest.
///
/// The descriptor is borrowed: the caller keeps it open until the upload is over.
package struct UploadSource: Sendable {
    /// Open for reading; the only handle used, so a path swapped after the claim changes nothing.
    package var fd: Int32
    /// What fstat said at claim time: `size` is the body's exact length, and a file whose size
    /// or mtime differs later has changed during the upload.
    package var status: FileSystem.Status
    /// Path relative to the outbox: the name for multipart/json bodies and the path in messages.
    package var path: RelativePath
    /// The upload's id, sent as `Idempotency-Key`.
    package var id: String
    /// Hex SHA-256 of the content when already known (saves a second read for the digest).
    package var sha256: String?
    package var contentType: String
    /// fstat of `fd` now (the kernel's, or a simulated disk's).
    package var currentStatus: @Sendable (Int32, String) throws -> FileSystem.Status

    package init(fd: Int32, status: FileSystem.Status, path: RelativePath, id: String, sha256: String?, contentType: String,
                 currentStatus: @escaping @Sendable (Int32, String) throws -> FileSystem.Status = { try FileSystem.status(fd: $0, path: $1) }) {
        self.currentStatus = currentStatus
        self.fd = fd
        self.status = status
        self.path = path
        self.id = id
        self.sha256 = sha256
        self.contentType = contentType
    }

    package var size: Int64 { status.size }

    /// Nil while the open file is as it was claimed; else what differs (or why it cannot be told).
    package func changeSinceClaim() -> String? {
        let now: FileSystem.Status
        do { now = try currentStatus(fd, path.logSafe) } catch { return "cannot stat it: \(error)" }
        if now.size != status.size { return "size \(status.size) → \(now.size)" }
        if now.mtimeNanos != status.mtimeNanos { return "modified" }
        return nil
    }
}
