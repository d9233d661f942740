@preconcurrency import Glibc
import UploaderSupport

/// The calls that adopt another user's file (`FileAdoption`), as the kernel makes them: a link
/// of a foreign file is refused (`SimDiskState.link`), a copy is create, write, the times set,
/// fsync — one operation each, so a crash can fall between any two — and an exchange swaps two
/// entries in one metadata operation.
extension SimDisk {
    func mayLink(_ path: RelativePath, in directory: String, status: FileSystem.Status) -> Bool {
        status.owner != UInt32(SimNode.producerUID)
    }

    func copyFile(from fd: Int32, status: FileSystem.Status, to name: RelativePath, in directory: String) throws {
        let display = name.displayed(in: directory)
        let parts = SimDiskState.components(directory, name)
        let data = try reading("read", display) { state in state.nodes[try state.openInode(fd)]!.content.data }
        let inode = try create(parts, display, exclusive: true)
        do {
            try writeAll(data, to: inode, display)
            try operation("utimens", display) { state in state.setModificationTime(status.mtimeNanos, of: inode) }
            try fsync(inode, display)
        } catch {
            try? unlink(name, in: directory)
            throw error
        }
    }

    /// The simulated disk keeps no permissions: every directory is the daemon's.
    func mayWriteDirectory(of path: RelativePath, in directory: String) -> Bool { true }

    func exchange(_ a: RelativePath, in aDir: String, with b: RelativePath, in bDir: String) throws {
        let first = SimDiskState.components(aDir, a), second = SimDiskState.components(bDir, b)
        try operation("exchange", "\(a.displayed(in: aDir)) with \(b.displayed(in: bDir))") { state in
            try state.exchange(first, second)
        }
    }
}
