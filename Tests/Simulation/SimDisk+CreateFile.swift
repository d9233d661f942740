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
        let inode = try create(parts, display, exclusive: true)
        do {
            try writeAll(data, to: inode, display)
            if sync { try fsync(inode, display) }
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
        let inode = try create(parts, display, exclusive: false, call: "open")
        let before = state.withLock { $0.nodes[inode]!.content.data }
        try writeAll(before + data, to: inode, display)
    }

    /// open(O_CREAT): one operation; a new inode may find the disk full.
    func create(_ parts: [[UInt8]], _ display: String, exclusive: Bool, call: String = "create") throws -> UInt64 {
        let fault = fault(at: .allocate)
        return try operation(call, display) { state in
            if exclusive || (try? state.locate(parts, followLast: true).inode) == nil { try Self.refuse(fault) }
            return try state.createFile(parts, exclusive: exclusive)
        }
    }
}
