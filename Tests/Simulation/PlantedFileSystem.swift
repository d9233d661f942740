import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool

/// The spool's file system with a planted bug (`Plant`): every call goes to the process's view
/// of the disk, except the few the plant changes. The invariants read the disk itself, never
/// through this wrapper.
struct PlantedFileSystem: SpoolFileSystem {
    let inner: ProcessView
    let plant: Plant
    /// Which run of the daemon this is (1 for the first boot): `mtimeShiftsPerBoot` shifts by it.
    let boot: Int

    private static let hour: Int64 = 3_600_000_000_000

    private func shifted(_ status: FileSystem.Status) -> FileSystem.Status {
        guard plant == .mtimeShiftsPerBoot else { return status }
        var status = status
        status.mtimeNanos += Int64(boot) * Self.hour
        return status
    }

    func status(_ path: RelativePath, in directory: String) throws -> FileSystem.Status {
        shifted(try inner.status(path, in: directory))
    }

    func status(fd: Int32, path: String) throws -> FileSystem.Status { shifted(try inner.status(fd: fd, path: path)) }

    func exists(_ path: RelativePath, in directory: String) -> Bool { inner.exists(path, in: directory) }

    func openForReading(_ path: RelativePath, in directory: String) throws -> Int32 { try inner.openForReading(path, in: directory) }

    func close(_ fd: Int32) { inner.close(fd) }

    func read(fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String?) throws -> Int {
        try inner.read(fd: fd, into: buffer, at: offset, path: path)
    }

    func readAll(_ path: RelativePath, in directory: String) throws -> [UInt8] {
        try inner.readAll(path, in: directory)
    }

    func createFile(_ data: [UInt8], named name: RelativePath, in directory: String, sync: Bool) throws {
        try inner.createFile(data, named: name, in: directory, sync: sync)
    }

    func createFiles(_ files: [NewFile]) -> [Result<Void, any Error>] { inner.createFiles(files) }

    func rename(_ from: RelativePath, in fromDir: String, to: RelativePath, in toDir: String, replace: Bool) throws {
        try inner.rename(from, in: fromDir, to: to, in: toDir, replace: replace)
    }

    func link(_ existing: RelativePath, in fromDir: String, to new: RelativePath, in toDir: String) throws {
        try inner.link(existing, in: fromDir, to: new, in: toDir)
    }

    func unlink(_ path: RelativePath, in directory: String) throws {
        try inner.unlink(path, in: directory)
    }

    func mayLink(_ path: RelativePath, in directory: String, status: FileSystem.Status) -> Bool {
        inner.mayLink(path, in: directory, status: status)
    }

    func copyFile(from fd: Int32, status: FileSystem.Status, to name: RelativePath, in directory: String) throws {
        try inner.copyFile(from: fd, status: status, to: name, in: directory)
    }

    func mayWriteDirectory(of path: RelativePath, in directory: String) -> Bool { inner.mayWriteDirectory(of: path, in: directory) }

    func exchange(_ a: RelativePath, in aDir: String, with b: RelativePath, in bDir: String) throws {
        try inner.exchange(a, in: aDir, with: b, in: bDir)
    }

    func syncDirectory(of name: RelativePath, in directory: String) throws {
        try inner.syncDirectory(of: name, in: directory)
    }

    func makeDirectories(_ path: String) throws { try inner.makeDirectories(path) }

    func makeParents(of path: RelativePath, in directory: String) throws { try inner.makeParents(of: path, in: directory) }

    func list(_ path: RelativePath, in directory: String) throws -> [FileSystem.Entry] {
        try inner.list(path, in: directory)
    }

    func append(_ data: [UInt8], to name: RelativePath, in directory: String) throws { try inner.append(data, to: name, in: directory) }

    func withLock<T>(_ name: RelativePath, in directory: String, exclusive: Bool, _ body: () throws -> T) throws -> T {
        try inner.withLock(name, in: directory, exclusive: exclusive, body)
    }
    func takeProcessLock(_ name: RelativePath, in directory: String, stamp: [UInt8]) throws -> ProcessLockTaking {
        try inner.takeProcessLock(name, in: directory, stamp: stamp)
    }
}
