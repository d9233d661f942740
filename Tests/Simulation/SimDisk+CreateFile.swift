@preconcurrency import Glibc
import UploaderSupport

/// `createFile` as `FileSystem.createFile` does it, one operation per system call that
/// changes the disk, so the simulator can crash between any two: create (O_EXCL), write,
/// fsync when asked; on a failure after the create, unlink the half-made file.
/// (`Spool.writeManifest` builds the atomic manifest write from this and `rename`.)
extension SimDisk {
    func createFile(_ data: [UInt8], named name: RelativePath, in directory: String, sync: Bool) throws {
        let display = name.displayed(in: directory)
        let parts = SimDiskState.components(directory, name)
        let inode = try operation("create", display) { state in try state.createFile(parts, exclusive: true) }
        do {
            try operation("write", display) { state in state.setData(data, of: inode) }
            if sync { try operation("fsync", display) { state in state.syncFile(inode) } }
        } catch {
            try? unlink(name, in: directory)
            throw error
        }
    }

    /// `append` as `FileSystem.append` does it: open (creating when missing), one write at the
    /// end; no fsync, so a power cut may keep the file's older content.
    func append(_ data: [UInt8], to name: RelativePath, in directory: String) throws {
        let display = name.displayed(in: directory)
        let parts = SimDiskState.components(directory, name)
        let inode = try operation("open", display) { state in try state.createFile(parts, exclusive: false) }
        try operation("write", display) { state in state.setData(state.nodes[inode]!.content.data + data, of: inode) }
    }
}
