import Foundation
import UploaderSupport
import UploaderConfig

/// A file a worker holds: its open descriptor (the only handle used from claim to upload,
/// so a swap for a symlink after detection changes nothing), what fstat said, and its manifest.
///
/// Handed from job to job (claim, upload, settle) on different threads, but held by one job
/// at a time: the profile's owner starts a file's next job only after the last one reported.
/// That hand-over, not a lock, is what keeps `manifest` consistent.
package final class ClaimedFile: @unchecked Sendable {
    package let path: RelativePath
    package let fd: Int32
    package let status: FileSystem.Status
    package var manifest: Manifest
    /// Where `fd` came from, and who closes it.
    package let fs: any SpoolFileSystem

    /// Last written within `timestampGranularity` of its claim: a rewrite of the same size in the
    /// same clock tick would leave size and mtime as they were, so only its content can tell
    /// (`contentChanged`). Older files cannot change unseen: any later write moves the mtime.
    package var writtenJustBefore = false

    /// Another user's file we copied to make it ours: its original, kept until this copy is filed.
    package var adoptedOriginal: FileAdoption.KeptOriginal?

    /// Coarser than the kernel's file time stamps ever are (one jiffy: 1–10 ms), with room for
    /// the lag between the coarse clock they come from and the wall clock.
    package static let timestampGranularity = 0.02

    package init(path: RelativePath, fd: Int32, status: FileSystem.Status, manifest: Manifest, fs: any SpoolFileSystem) {
        self.path = path
        self.fd = fd
        self.status = status
        self.manifest = manifest
        self.fs = fs
    }

    deinit { fs.close(fd) }

    /// Hex SHA-256 of the `size` bytes the descriptor holds now.
    package static func contentHash(fd: Int32, size: Int64, fs: any SpoolFileSystem, display: String,
                                    cancellation: CancellationFlag? = nil) throws -> String {
        var hasher = SHA256()
        try hasher.update(length: size, path: display, cancellation: cancellation) { buffer, offset in
            try fs.read(fd: fd, into: buffer, at: offset, path: display)
        }
        return hasher.finish().hexString
    }

    /// For a file `writtenJustBefore` its claim, with a claimed hash: nil while its bytes are still
    /// the ones hashed; else that they changed (a same-size rewrite within one clock tick), or
    /// why they cannot be read again.
    package func contentChanged() -> String? {
        do { return try contentChange() } catch { return "cannot read it again: \(error)" }
    }

    /// `contentChanged`, throwing when the bytes cannot be read again: a failed read says nothing
    /// of them, and a move about to file the file must stop rather than guess.
    package func contentChange() throws -> String? {
        guard writtenJustBefore, let claimedHash = manifest.sha256 else { return nil }
        let now = try ClaimedFile.contentHash(fd: fd, size: status.size, fs: fs, display: path.logSafe)
        return now == claimedHash ? nil : "content changed (same size, within one clock tick)"
    }
}
