import Foundation

/// The file-system calls the spool's code makes — claims, manifests, the lifecycle's moves,
/// recovery, census, retention — as one protocol, so that a model of a disk can stand in.
///
/// Production runs them on the kernel (`LocalFileSystem`); the simulator runs them on a disk
/// that can lose power between any two calls, and then runs the real recovery on what survived.
/// Paths are (directory, `RelativePath`) pairs; descriptors are what `openForReading` returned.
package protocol SpoolFileSystem: Sendable {
    /// `lstat`, never following a symlink on the way.
    func status(_ path: RelativePath, in directory: String) throws -> FileSystem.Status
    func status(fd: Int32, path: String) throws -> FileSystem.Status
    /// `status` of many paths in one directory (nil for each that cannot be read), each given to
    /// `keep` at once and only what it keeps returned: a start-up backlog asks it of every file,
    /// and needs two numbers of each, not every field. A hint for `order`, which ranks a nil as
    /// zeros; the claim of such a file says what is wrong with it.
    func statuses<Kept: Sendable>(_ paths: [RelativePath], in directory: String,
                                  keeping keep: @escaping @Sendable (FileSystem.Status?) -> Kept) -> [Kept]
    func exists(_ path: RelativePath, in directory: String) -> Bool
    /// Opens for reading without following symlinks or blocking on a FIFO.
    func openForReading(_ path: RelativePath, in directory: String) throws -> Int32
    func close(_ fd: Int32)
    /// `pread`: up to `buffer.count` bytes at `offset`; 0 at the end.
    func read(fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String?) throws -> Int
    /// The whole content of a small file (a manifest).
    func readAll(_ path: RelativePath, in directory: String) throws -> [UInt8]
    /// Creates `name` (never over an existing one: EEXIST), writes `data`, and with `sync` fsyncs
    /// it — so its content is durable before a rename makes it visible (see `Spool.writeManifest`).
    func createFile(_ data: [UInt8], named name: RelativePath, in directory: String, sync: Bool) throws
    /// `createFile(sync: true)` of each, together: their fsyncs share journal commits
    /// (`FileLayer.createFiles`). Each answers on its own, in order, once its own fsync returned.
    func createFiles(_ files: [NewFile]) -> [Result<Void, any Error>]
    /// With `replace: false`, fails with EEXIST rather than overwrite (RENAME_NOREPLACE).
    func rename(_ from: RelativePath, in fromDir: String, to: RelativePath, in toDir: String, replace: Bool) throws
    /// A second name for a file (link(2), never following a symlink); EEXIST when `new` exists.
    /// Moves between directories are link, fsync, unlink: a name that can never be lost.
    func link(_ existing: RelativePath, in fromDir: String, to new: RelativePath, in toDir: String) throws
    func unlink(_ path: RelativePath, in directory: String) throws
    /// Whether `link` of the regular file at `path` (`status` its lstat) is allowed to us: the
    /// kernel refuses a file of another user we may not write (`fs.protected_hardlinks`).
    func mayLink(_ path: RelativePath, in directory: String, status: FileSystem.Status) -> Bool
    /// A new file `name` (EEXIST if taken) with every byte of the open file `fd`, its permission
    /// bits and mtime, fsynced: our own copy of a file we may not link.
    func copyFile(from fd: Int32, status: FileSystem.Status, to name: RelativePath, in directory: String) throws
    /// Whether this process may create and remove names in the directory holding `path` (a
    /// producer's subdirectory of a recursive outbox may not let it).
    func mayWriteDirectory(of path: RelativePath, in directory: String) -> Bool
    /// renameat2(RENAME_EXCHANGE): the two names swap their files in one step.
    func exchange(_ a: RelativePath, in aDir: String, with b: RelativePath, in bDir: String) throws
    /// fsync of the directory holding `name`: makes the creations, renames and removals in it durable.
    func syncDirectory(of name: RelativePath, in directory: String) throws
    /// `mkdir -p`, mode 0750.
    func makeDirectories(_ path: String) throws
    /// The parent directories of `path` inside `directory`.
    func makeParents(of path: RelativePath, in directory: String) throws
    /// The entries of `path` inside `directory` (the directory itself when `path` is empty).
    func list(_ path: RelativePath, in directory: String) throws -> [FileSystem.Entry]
    /// The same entries, one at a time and none held: what a walk of a directory that may hold
    /// millions of names (sent/, for retention) reads it with.
    func forEachEntry(_ path: RelativePath, in directory: String, _ body: (FileSystem.Entry) throws -> Void) throws
    /// Appends `data` to `name` (created when missing), with no fsync: for the sent ledger, a
    /// statistic whose last lines a power cut may take.
    func append(_ data: [UInt8], to name: RelativePath, in directory: String) throws
    /// Runs `body` holding a lock on the file `name` in `directory` (`FileSystem.withLock`):
    /// what keeps two processes' moves of one file apart.
    func withLock<T>(_ name: RelativePath, in directory: String, exclusive: Bool, _ body: () throws -> T) throws -> T
    /// Takes, without waiting, the lock a process holds on `name` in `directory` for as long as it
    /// runs (`flock`, the file created mode 0640 when absent), and writes `stamp` in the file (its
    /// holder's pid, which messages name it by). When another holds it: what that one wrote.
    func takeProcessLock(_ name: RelativePath, in directory: String, stamp: [UInt8]) throws -> ProcessLockTaking
}

/// What `takeProcessLock` got.
package enum ProcessLockTaking: Sendable {
    /// Held while this object lives: dropping the last reference lets the lock go, as the
    /// holder's end does.
    case taken(any HeldProcessLock)
    /// Another holds it; its stamp as written (nil when it cannot be read).
    case heldElsewhere(stamp: [UInt8]?)
}

/// A lock held for as long as this object lives (`SpoolFileSystem.takeProcessLock`).
package protocol HeldProcessLock: AnyObject, Sendable {}

extension SpoolFileSystem {
    /// One at a time: what a file system with no shared commits to gain from does.
    package func createFiles(_ files: [NewFile]) -> [Result<Void, any Error>] {
        files.map { file in Result { try createFile(file.data, named: file.name, in: file.directory, sync: true) } }
    }

    /// From the listing: a model of a disk holds its directories in memory anyway.
    package func forEachEntry(_ path: RelativePath, in directory: String, _ body: (FileSystem.Entry) throws -> Void) throws {
        for entry in try list(path, in: directory) { try body(entry) }
    }

    package func statuses<Kept: Sendable>(_ paths: [RelativePath], in directory: String,
                                          keeping keep: @escaping @Sendable (FileSystem.Status?) -> Kept) -> [Kept] {
        paths.map { keep(try? status($0, in: directory)) }  // a hint for `order` (see the requirement)
    }

    /// Every field of each `status` (`statuses(_:in:keeping:)`).
    package func statuses(_ paths: [RelativePath], in directory: String) -> [FileSystem.Status?] {
        statuses(paths, in: directory) { $0 }
    }

    /// `status`, or nil when nothing has that name; any other failure is thrown.
    package func statusIfPresent(_ path: RelativePath, in directory: String) throws -> FileSystem.Status? {
        do {
            return try status(path, in: directory)
        } catch let error as SystemError where error.isNotFound {
            return nil
        }
    }
}

/// The kernel's file system: the file layer on the kernel's system calls.
package typealias LocalFileSystem = FileLayer<KernelCalls>

/// The spool's calls on the kernel: the file layer's, and the permission checks and locks that
/// only the kernel makes (a simulated disk makes its own).
extension FileLayer: SpoolFileSystem where Calls == KernelCalls {
    package init() { self.init(calls: KernelCalls()) }

    package func mayLink(_ path: RelativePath, in directory: String, status: FileSystem.Status) -> Bool {
        FileSystem.mayLink(path, in: directory, status: status)
    }

    package func mayWriteDirectory(of path: RelativePath, in directory: String) -> Bool {
        FileSystem.mayWriteDirectory(of: path, in: directory)
    }

    package func withLock<T>(_ name: RelativePath, in directory: String, exclusive: Bool, _ body: () throws -> T) throws -> T {
        try FileSystem.withLock(name, in: directory, exclusive: exclusive, body)
    }

    package func takeProcessLock(_ name: RelativePath, in directory: String, stamp: [UInt8]) throws -> ProcessLockTaking {
        try takeLockFile(name, in: directory, stamp: stamp)
    }
}
