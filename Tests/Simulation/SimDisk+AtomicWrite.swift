@preconcurrency import Glibc
import UploaderSupport

/// `writeAtomically` as `FileSystem.writeAtomically` does it, one operation per system call
/// that changes the disk, so the simulator can crash between any two: create the temporary
/// file (O_EXCL), write, fsync it, rename over `name`; on a failure, unlink the temporary file.
extension SimDisk {
    func writeAtomically(_ data: [UInt8], to name: RelativePath, in directory: String, temporaryDirectory: String?) throws {
        let temporaryName = state.withLock { state in
            state.temporaryCounter += 1
            return RelativePath(".upl-tmp-" + String(state.temporaryCounter, radix: 16))
        }
        let temporary = temporaryDirectory == nil ? (name.parent.map { $0.appending(temporaryName) } ?? temporaryName) : temporaryName
        let holder = temporaryDirectory ?? directory
        let display = name.displayed(in: directory)
        let parts = SimDiskState.components(holder, temporary)
        let inode: UInt64
        do {
            inode = try create(parts, display: display)
        } catch let error as SystemError where error.isNotFound && temporaryDirectory != nil {
            // The temporary directory went with its outbox: made again, as the real code does.
            try makeDirectories(holder)
            inode = try create(parts, display: display)
        }
        do {
            try operation("write", display) { state in state.setData(data, of: inode) }
            try operation("fsync", display) { state in state.syncFile(inode) }
            try rename(temporary, in: holder, to: name, in: directory, replace: true)
        } catch {
            try? unlink(temporary, in: holder)
            throw error
        }
    }

    private func create(_ parts: [[UInt8]], display: String) throws -> UInt64 {
        try operation("create", display) { state in try state.createFile(parts, exclusive: true) }
    }
}
