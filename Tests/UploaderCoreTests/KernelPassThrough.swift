import Foundation
@testable import UploaderSupport

/// A test's file system that is the kernel's but for the few calls it writes itself (to note
/// them, or to let a producer act between two of them): every other call goes to `base` as it is.
protocol KernelPassThrough: SpoolFileSystem {
    var base: LocalFileSystem { get }
}

extension KernelPassThrough {
    func status(_ path: RelativePath, in directory: String) throws -> FileSystem.Status { try base.status(path, in: directory) }
    func status(fd: Int32, path: String) throws -> FileSystem.Status { try base.status(fd: fd, path: path) }
    func exists(_ path: RelativePath, in directory: String) -> Bool { base.exists(path, in: directory) }
    func openForReading(_ path: RelativePath, in directory: String) throws -> Int32 { try base.openForReading(path, in: directory) }
    func close(_ fd: Int32) { base.close(fd) }
    func read(fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String?) throws -> Int {
        try base.read(fd: fd, into: buffer, at: offset, path: path)
    }
    func readAll(_ path: RelativePath, in directory: String) throws -> [UInt8] { try base.readAll(path, in: directory) }
    func createFile(_ data: [UInt8], named name: RelativePath, in directory: String, sync: Bool) throws {
        try base.createFile(data, named: name, in: directory, sync: sync)
    }
    func rename(_ from: RelativePath, in fromDir: String, to: RelativePath, in toDir: String, replace: Bool) throws {
        try base.rename(from, in: fromDir, to: to, in: toDir, replace: replace)
    }
    func link(_ existing: RelativePath, in fromDir: String, to new: RelativePath, in toDir: String) throws {
        try base.link(existing, in: fromDir, to: new, in: toDir)
    }
    func unlink(_ path: RelativePath, in directory: String) throws { try base.unlink(path, in: directory) }
    func mayLink(_ path: RelativePath, in directory: String, status: FileSystem.Status) -> Bool {
        base.mayLink(path, in: directory, status: status)
    }
    func copyFile(from fd: Int32, status: FileSystem.Status, to name: RelativePath, in directory: String) throws {
        try base.copyFile(from: fd, status: status, to: name, in: directory)
    }
    func mayWriteDirectory(of path: RelativePath, in directory: String) -> Bool { base.mayWriteDirectory(of: path, in: directory) }
    func exchange(_ a: RelativePath, in aDir: String, with b: RelativePath, in bDir: String) throws {
        try base.exchange(a, in: aDir, with: b, in: bDir)
    }
    func syncDirectory(of name: RelativePath, in directory: String) throws { try base.syncDirectory(of: name, in: directory) }
    func makeDirectories(_ path: String) throws { try base.makeDirectories(path) }
    func makeParents(of path: RelativePath, in directory: String) throws { try base.makeParents(of: path, in: directory) }
    func list(_ path: RelativePath, in directory: String) throws -> [FileSystem.Entry] { try base.list(path, in: directory) }
    func forEachEntry(_ path: RelativePath, in directory: String, _ body: (FileSystem.Entry) throws -> Void) throws {
        try base.forEachEntry(path, in: directory, body)
    }
    func append(_ data: [UInt8], to name: RelativePath, in directory: String) throws { try base.append(data, to: name, in: directory) }
    func withLock<T>(_ name: RelativePath, in directory: String, exclusive: Bool, _ body: () throws -> T) throws -> T {
        try base.withLock(name, in: directory, exclusive: exclusive, body)
    }
    func takeProcessLock(_ name: RelativePath, in directory: String, stamp: [UInt8]) throws -> ProcessLockTaking {
        try base.takeProcessLock(name, in: directory, stamp: stamp)
    }
}
