@preconcurrency import Glibc
import Foundation
import Synchronization
import UploaderSupport
import UploaderSpool

/// The disk as one run of the daemon process sees it: each call of the spool hands the baton
/// back first (so other jobs may move in between) and runs production's file layer
/// (`FileLayer`) on this view's system calls, each of which goes to the simulated disk, is
/// counted, and dies with the process at the crash point the simulator armed: from then on
/// every call fails with EIO and changes nothing, and descriptors of the dead process are never
/// closed on the disk again.
final class ProcessView: SpoolFileSystem, @unchecked Sendable {
    // Used by the one thread holding the baton (see SimJobQueue).
    private let disk: SimDisk
    private let scheduler: SimJobQueue
    private var calls = 0
    private var crashAt: Int?
    private(set) var dead = false
    /// What the crash should do to the disk, decided when it was armed.
    private(set) var crashKind: CrashKind = .kill

    enum CrashKind: String { case kill = "kill -9", powerCut = "power cut" }

    init(disk: SimDisk, scheduler: SimJobQueue) {
        self.disk = disk
        self.scheduler = scheduler
    }

    /// The process dies at its `after`-th system call from now.
    func arm(after: Int, kind: CrashKind) {
        crashAt = calls + max(1, after)
        crashKind = kind
    }

    var armed: Bool { crashAt != nil && !dead }

    /// The schedule ended with the process still running (a violation stops it mid-step): it dies
    /// as at a crash, so its threads, whatever they wait for, unwind on their next disk call
    /// instead of waiting for work the world no longer gives them.
    func end() { dead = true }

    /// Hands the baton back before a call of the spool's (so other jobs may move in between).
    /// Returns false when the process is dead.
    private func enter() -> Bool {
        if dead { return false }
        scheduler.yield()
        return !dead
    }

    /// Counts one system call; the armed one, and every one after it, fails with EIO and changes
    /// nothing: the process is dead (its file layer's own clean-up is refused too, as a `kill -9`
    /// between two system calls leaves it).
    fileprivate func enterCall() throws(Errno) {
        if dead { throw Errno.io }
        calls += 1
        if let crashAt, calls >= crashAt {
            dead = true
            throw Errno.io
        }
    }

    private func dieError(_ what: String, _ path: String?) -> SystemError { SystemError(what, path: path, code: .io) }

    /// Production's file layer on this process's system calls.
    private var layer: FileLayer<ProcessView> { FileLayer(calls: self) }

    func status(_ path: RelativePath, in directory: String) throws -> FileSystem.Status {
        guard enter() else { throw dieError("lstat", directory) }
        return try layer.status(path, in: directory)
    }

    func status(fd: Int32, path: String) throws -> FileSystem.Status {
        guard enter() else { throw dieError("fstat", path) }
        return try layer.status(fd: fd, path: path)
    }

    func exists(_ path: RelativePath, in directory: String) -> Bool {
        guard enter() else { return false }
        return layer.exists(path, in: directory)
    }

    func openForReading(_ path: RelativePath, in directory: String) throws -> Int32 {
        guard enter() else { throw dieError("open", directory) }
        return try layer.openForReading(path, in: directory)
    }

    func close(_ fd: Int32) {
        guard !dead else { return }
        disk.close(SystemDescriptor(rawValue: fd))
    }

    func read(fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String?) throws -> Int {
        guard enter() else { throw dieError("read", path) }
        return try layer.read(fd: fd, into: buffer, at: offset, path: path)
    }

    func readAll(_ path: RelativePath, in directory: String) throws -> [UInt8] {
        guard enter() else { throw dieError("read", directory) }
        return try layer.readAll(path, in: directory)
    }

    func createFile(_ data: [UInt8], named name: RelativePath, in directory: String, sync: Bool) throws {
        guard enter() else { throw dieError("create", directory) }
        try layer.createFile(data, named: name, in: directory, sync: sync)
    }

    func createFiles(_ files: [NewFile]) -> [Result<Void, any Error>] {
        guard enter() else { return files.map { .failure(dieError("create", $0.directory)) } }
        return layer.createFiles(files)
    }

    func rename(_ from: RelativePath, in fromDir: String, to: RelativePath, in toDir: String, replace: Bool) throws {
        guard enter() else { throw dieError("rename", fromDir) }
        try layer.rename(from, in: fromDir, to: to, in: toDir, replace: replace)
    }

    func link(_ existing: RelativePath, in fromDir: String, to new: RelativePath, in toDir: String) throws {
        guard enter() else { throw dieError("link", fromDir) }
        try layer.link(existing, in: fromDir, to: new, in: toDir)
    }

    /// Hears each unlink the process makes, just before it happens (the world judges removals from sent/).
    var unlinking: (RelativePath, String) -> Void = { _, _ in }

    func unlink(_ path: RelativePath, in directory: String) throws {
        guard enter() else { throw dieError("unlink", directory) }
        unlinking(path, directory)
        try layer.unlink(path, in: directory)
    }

    func mayLink(_ path: RelativePath, in directory: String, status: FileSystem.Status) -> Bool {
        disk.mayLink(path, in: directory, status: status)
    }

    func copyFile(from fd: Int32, status: FileSystem.Status, to name: RelativePath, in directory: String) throws {
        guard enter() else { throw dieError("create", directory) }
        try layer.copyFile(from: fd, status: status, to: name, in: directory)
    }

    /// The simulated disk keeps no permissions: every directory is the daemon's.
    func mayWriteDirectory(of path: RelativePath, in directory: String) -> Bool { true }

    func exchange(_ a: RelativePath, in aDir: String, with b: RelativePath, in bDir: String) throws {
        guard enter() else { throw dieError("exchange", aDir) }
        try layer.exchange(a, in: aDir, with: b, in: bDir)
    }

    /// Yields before, like every call, and after, as an fsync takes its time: workers asking
    /// for the same directory meanwhile wait for this fsync or share the next, and one that asks
    /// after it was made but before it returned must not count as covered by it
    /// (`DirectorySyncer`'s group commit with several callers).
    func syncDirectory(of name: RelativePath, in directory: String) throws {
        guard enter() else { throw dieError("fsync", directory) }
        try layer.syncDirectory(of: name, in: directory)
        scheduler.yield()
    }

    func makeDirectories(_ path: String) throws {
        guard enter() else { throw dieError("mkdir", path) }
        try layer.makeDirectories(path)
    }

    func makeParents(of path: RelativePath, in directory: String) throws {
        guard enter() else { throw dieError("mkdir", directory) }
        try layer.makeParents(of: path, in: directory)
    }

    /// Hears each directory listing the process begins (a retention pass begins with sent/'s).
    var listing: (RelativePath, String) -> Void = { _, _ in }

    func list(_ path: RelativePath, in directory: String) throws -> [FileSystem.Entry] {
        guard enter() else { throw dieError("opendir", directory) }
        listing(path, directory)
        return try layer.list(path, in: directory)
    }

    func append(_ data: [UInt8], to name: RelativePath, in directory: String) throws {
        guard enter() else { throw dieError("append", directory) }
        try layer.append(data, to: name, in: directory)
    }

    /// Locks this process holds now, by name, as many times as held.
    private var locksHeld: [[UInt8]: Int] = [:]


    /// The machine's locks, which other processes take too (nil: this process is alone).
    var locks: SimFileLocks?

    /// The spool lock, as production takes it, on the machine's flock table.
    func takeProcessLock(_ name: RelativePath, in directory: String, stamp: [UInt8]) throws -> ProcessLockTaking {
        guard enter() else { throw dieError("open", directory) }
        return try layer.takeLockFile(name, in: directory, stamp: stamp)
    }

    /// Waits for the lock among the machine's (`locks`), then runs `body` holding it.
    func withLock<T>(_ name: RelativePath, in directory: String, exclusive: Bool, _ body: () throws -> T) throws -> T {
        let path = name.displayed(in: directory)
        locks?.take(path, exclusive: exclusive)
        locksHeld[name.bytes, default: 0] += 1
        defer {
            locksHeld[name.bytes, default: 1] -= 1
            locks?.give(path, exclusive: exclusive)
        }
        return try body()
    }
}

/// The process's system calls: each is counted, refused once the process is dead, and made on
/// the simulated disk.
extension ProcessView: SystemCalls {
    func open(_ path: UnsafePointer<CChar>, at directory: SystemDescriptor, _ flags: OpenFlags, mode: UInt32) throws(Errno) -> SystemDescriptor {
        try enterCall()
        return try disk.open(path, at: directory, flags, mode: mode)
    }

    func close(_ fd: SystemDescriptor) {
        guard !dead else { return }
        disk.close(fd)
    }

    func tryLock(_ fd: SystemDescriptor) throws(Errno) -> Bool {
        try enterCall()
        return try disk.tryLock(fd)
    }

    func truncate(_ fd: SystemDescriptor, to size: Int64) throws(Errno) {
        try enterCall()
        try disk.truncate(fd, to: size)
    }

    func read(_ fd: SystemDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try enterCall()
        return try disk.read(fd, into: buffer)
    }

    func read(_ fd: SystemDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(Errno) -> Int {
        try enterCall()
        return try disk.read(fd, into: buffer, at: offset)
    }

    func write(_ fd: SystemDescriptor, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try enterCall()
        return try disk.write(fd, bytes)
    }

    func fsync(_ fd: SystemDescriptor) throws(Errno) {
        try enterCall()
        try disk.fsync(fd)
    }

    func startWriteback(_ fd: SystemDescriptor) throws(Errno) {
        try enterCall()
        try disk.startWriteback(fd)
    }

    func status(of fd: SystemDescriptor) throws(Errno) -> FileSystem.Status {
        try enterCall()
        return try disk.status(of: fd)
    }

    func status(_ path: UnsafePointer<CChar>, at directory: SystemDescriptor, followLast: Bool) throws(Errno) -> FileSystem.Status {
        try enterCall()
        return try disk.status(path, at: directory, followLast: followLast)
    }

    func link(_ existing: UnsafePointer<CChar>, to new: UnsafePointer<CChar>) throws(Errno) {
        try enterCall()
        try disk.link(existing, to: new)
    }

    func rename(_ from: UnsafePointer<CChar>, to: UnsafePointer<CChar>, _ mode: RenameMode) throws(Errno) {
        try enterCall()
        try disk.rename(from, to: to, mode)
    }

    func unlink(_ path: UnsafePointer<CChar>) throws(Errno) {
        try enterCall()
        try disk.unlink(path)
    }

    func makeDirectory(_ path: UnsafePointer<CChar>, mode: UInt32) throws(Errno) {
        try enterCall()
        try disk.makeDirectory(path, mode: mode)
    }

    func setPermissions(of fd: SystemDescriptor, to permissions: UInt32) throws(Errno) {
        try enterCall()
        try disk.setPermissions(of: fd, to: permissions)
    }

    func setModificationTime(of fd: SystemDescriptor, to nanos: Int64) throws(Errno) {
        try enterCall()
        try disk.setModificationTime(of: fd, to: nanos)
    }

    func copyRange(from input: SystemDescriptor, at offset: inout Int64, to output: SystemDescriptor, count: Int) throws(Errno) -> Int {
        try enterCall()
        return try disk.copyRange(from: input, at: &offset, to: output, count: count)
    }

    func openDirectory(_ path: UnsafePointer<CChar>) throws(Errno) -> DirectoryStream {
        try enterCall()
        return try disk.openDirectory(path)
    }

    /// Not counted: one getdents hands out many entries (the opendir was counted).
    func nextEntry(_ stream: DirectoryStream) throws(Errno) -> FileSystem.Entry? {
        if dead { throw Errno.io }
        return try disk.nextEntry(stream)
    }

    func closeDirectory(_ stream: DirectoryStream) {
        guard !dead else { return }
        disk.closeDirectory(stream)
    }
}
