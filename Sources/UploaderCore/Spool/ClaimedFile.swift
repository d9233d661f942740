@preconcurrency import Glibc
import Foundation

/// A file a worker holds: its open descriptor (the only handle used from claim to upload,
/// so a swap for a symlink after detection changes nothing), what fstat said, and its manifest.
package final class ClaimedFile {
    package let path: RelativePath
    package let fd: Int32
    package let status: FileSystem.Status
    package var manifest: Manifest

    package init(path: RelativePath, fd: Int32, status: FileSystem.Status, manifest: Manifest) {
        self.path = path
        self.fd = fd
        self.status = status
        self.manifest = manifest
    }

    deinit { close(fd) }
}
