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
    /// pread of `fd` (the kernel's, or a simulated disk's): what a range's digest is read with.
    package var read: @Sendable (Int32, UnsafeMutableRawBufferPointer, Int64, String) throws -> Int = { fd, buffer, offset, path in
        try FileSystem.read(fd: fd, into: buffer, at: offset, path: path)
    }

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

    /// SHA-256 of `length` bytes from `offset` (an S3 part, a tus chunk), read through `read`.
    package func sha256(offset: Int64, length: Int64, path: String) throws -> [UInt8] {
        var hasher = SHA256()
        try hasher.update(length: length, path: path) { buffer, at in try read(fd, buffer, offset + at, path) }
        return hasher.finish()
    }

    /// Nil while the open file is as it was claimed; else what differs (or why it cannot be told).
    package func changeSinceClaim() -> String? {
        do { return try change() } catch { return "cannot stat it: \(error)" }
    }

    /// Nil while the open file is as it was claimed; else what differs. Throws when fstat cannot
    /// tell: a move about to file it as sent must not take that for an answer either way.
    package func change() throws -> String? {
        let now = try currentStatus(fd, path.logSafe)
        if now.size != status.size { return "size \(status.size) → \(now.size)" }
        if now.mtimeNanos != status.mtimeNanos { return "modified" }
        return nil
    }
}
