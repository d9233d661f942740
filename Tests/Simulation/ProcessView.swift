@preconcurrency import Glibc
import Foundation
import Synchronization
import UploaderSupport
import UploaderSpool

/// The disk as one run of the daemon process sees it: every call goes to the simulated disk,
/// is counted, hands the baton back first (so other jobs may move in between), and dies with
/// the process at the crash point the simulator armed: from then on every call fails with EIO
/// and changes nothing, and descriptors of the dead process are never closed on the disk again.
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

    /// The process dies at its `after`-th disk call from now.
    func arm(after: Int, kind: CrashKind) {
        crashAt = calls + max(1, after)
        crashKind = kind
    }

    var armed: Bool { crashAt != nil && !dead }

    /// The schedule ended with the process still running (a violation stops it mid-step): it dies
    /// as at a crash, so its threads, whatever they wait for, unwind on their next disk call
    /// instead of waiting for work the world no longer gives them.
    func end() { dead = true }

    /// For a call made of several disk operations (`createFile` is create, write, fsync): how many
    /// of its `n` operations happen before the armed crash, drawn by the simulator (0: none of them).
    var splitInside: ((_ n: Int) -> Int)?
    /// The crash falls inside the call being entered, after this many of its operations.
    private var cutInside: Int?

    /// Counts a call; dies at the armed one. Returns false when the process is dead. A call of
    /// `operations` disk operations may die inside: it goes ahead, and `splitting` cuts it.
    private func enter(yielding: Bool = true, operations: Int = 1) -> Bool {
        if dead { return false }
        if yielding { scheduler.yield() }
        if dead { return false }
        calls += 1
        if let crashAt, calls >= crashAt {
            dead = true
            if operations > 1, let after = splitInside?(operations), after > 0 {
                cutInside = after
                return true
            }
            return false
        }
        return true
    }

    /// Runs a multi-operation call; when the crash falls inside it, its first operations happen
    /// and the disk refuses the rest (the call's own clean-up too), as a `kill -9` between two
    /// system calls leaves it.
    private func splitting<R>(_ body: () throws -> R) throws -> R {
        guard let after = cutInside else { return try body() }
        cutInside = nil
        disk.crash(atOperation: disk.operations + after)
        defer { disk.disarmCrash() }
        return try body()
    }

    private func dieError(_ what: String, _ path: String?) -> SystemError { SystemError(what, path: path, code: .io) }

    func status(_ path: RelativePath, in directory: String) throws -> FileSystem.Status {
        guard enter() else { throw dieError("lstat", directory) }
        return try disk.status(path, in: directory)
    }

    func status(fd: Int32, path: String) throws -> FileSystem.Status {
        guard enter() else { throw dieError("fstat", path) }
        return try disk.status(fd: fd, path: path)
    }

    func exists(_ path: RelativePath, in directory: String) -> Bool {
        guard enter() else { return false }
        return disk.exists(path, in: directory)
    }

    func openForReading(_ path: RelativePath, in directory: String) throws -> Int32 {
        guard enter() else { throw dieError("open", directory) }
        return try disk.openForReading(path, in: directory)
    }

    func close(_ fd: Int32) {
        guard !dead else { return }
        disk.close(fd)
    }

    func read(fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String?) throws -> Int {
        guard enter() else { throw dieError("read", path) }
        return try disk.read(fd: fd, into: buffer, at: offset, path: path)
    }

    func readAll(_ path: RelativePath, in directory: String) throws -> [UInt8] {
        guard enter() else { throw dieError("read", directory) }
        return try disk.readAll(path, in: directory)
    }

    func createFile(_ data: [UInt8], named name: RelativePath, in directory: String, sync: Bool) throws {
        guard enter(operations: sync ? 3 : 2) else { throw dieError("create", directory) }
        try splitting { try disk.createFile(data, named: name, in: directory, sync: sync) }
    }

    func rename(_ from: RelativePath, in fromDir: String, to: RelativePath, in toDir: String, replace: Bool) throws {
        guard enter() else { throw dieError("rename", fromDir) }
        try disk.rename(from, in: fromDir, to: to, in: toDir, replace: replace)
    }

    func link(_ existing: RelativePath, in fromDir: String, to new: RelativePath, in toDir: String) throws {
        guard enter() else { throw dieError("link", fromDir) }
        try disk.link(existing, in: fromDir, to: new, in: toDir)
    }

    /// Hears each unlink the process makes, just before it happens (the world judges removals from sent/).
    var unlinking: (RelativePath, String) -> Void = { _, _ in }

    func unlink(_ path: RelativePath, in directory: String) throws {
        guard enter() else { throw dieError("unlink", directory) }
        unlinking(path, directory)
        try disk.unlink(path, in: directory)
    }

    func mayLink(_ path: RelativePath, in directory: String, status: FileSystem.Status) -> Bool {
        disk.mayLink(path, in: directory, status: status)
    }

    func copyFile(from fd: Int32, status: FileSystem.Status, to name: RelativePath, in directory: String) throws {
        guard enter(operations: 4) else { throw dieError("create", directory) }
        try splitting { try disk.copyFile(from: fd, status: status, to: name, in: directory) }
    }

    /// The simulated disk keeps no permissions: every directory is the daemon's.
    func mayWriteDirectory(of path: RelativePath, in directory: String) -> Bool { true }

    func exchange(_ a: RelativePath, in aDir: String, with b: RelativePath, in bDir: String) throws {
        guard enter() else { throw dieError("exchange", aDir) }
        try disk.exchange(a, in: aDir, with: b, in: bDir)
    }

    /// Yields like every call, so that workers asking for the same directory meanwhile wait for
    /// this fsync or share the next (`DirectorySyncer`'s group commit with several callers).
    func syncDirectory(of name: RelativePath, in directory: String) throws {
        guard enter() else { throw dieError("fsync", directory) }
        try disk.syncDirectory(of: name, in: directory)
    }

    func makeDirectories(_ path: String) throws {
        guard enter(operations: 2) else { throw dieError("mkdir", path) }
        try splitting { try disk.makeDirectories(path) }
    }

    func makeParents(of path: RelativePath, in directory: String) throws {
        guard enter(operations: 2) else { throw dieError("mkdir", directory) }
        try splitting { try disk.makeParents(of: path, in: directory) }
    }

    /// Hears each directory listing the process begins (a retention pass begins with sent/'s).
    var listing: (RelativePath, String) -> Void = { _, _ in }

    func list(_ path: RelativePath, in directory: String) throws -> [FileSystem.Entry] {
        guard enter() else { throw dieError("opendir", directory) }
        listing(path, directory)
        return try disk.list(path, in: directory)
    }

    func append(_ data: [UInt8], to name: RelativePath, in directory: String) throws {
        guard enter(operations: 2) else { throw dieError("append", directory) }
        try splitting { try disk.append(data, to: name, in: directory) }
    }

    /// Locks this process holds now, by name, as many times as held.
    private var locksHeld: [[UInt8]: Int] = [:]


    /// The machine's locks, which other processes take too (nil: this process is alone).
    var locks: SimFileLocks?

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
