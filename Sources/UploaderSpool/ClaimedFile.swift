@preconcurrency import Glibc
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

    package init(path: RelativePath, fd: Int32, status: FileSystem.Status, manifest: Manifest, fs: any SpoolFileSystem) {
        self.path = path
        self.fd = fd
        self.status = status
        self.manifest = manifest
        self.fs = fs
    }

    deinit { fs.close(fd) }
}
