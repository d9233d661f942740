@preconcurrency import Glibc
import UploaderSupport

/// The permission checks of adopting another user's file (`FileAdoption`), as the kernel would
/// answer them: a link of a foreign file is refused (`SimDiskState.link` refuses it too). The
/// copy and the exchange are the file layer's, on the simulated system calls.
extension SimDisk {
    func mayLink(_ path: RelativePath, in directory: String, status: FileSystem.Status) -> Bool {
        status.owner != UInt32(SimNode.producerUID)
    }

    /// The simulated disk keeps no permissions: every directory is the daemon's.
    func mayWriteDirectory(of path: RelativePath, in directory: String) -> Bool { true }
}
