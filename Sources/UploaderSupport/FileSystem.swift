import Foundation

/// The file calls on the kernel for callers with no spool around them (the CLI, the daemon's
/// state and metrics files, the watcher's table): each is `FileLayer`'s call of the same name
/// on `KernelCalls`, so there is one implementation, the one the simulator runs too.
///
/// Paths are (directory, `RelativePath`) pairs so names that are not UTF-8 survive intact.
package enum FileSystem {
    /// The file layer on the kernel.
    package static var kernel: FileLayer<KernelCalls> { FileLayer(calls: KernelCalls()) }

    /// Opens a file for reading without following a symlink — neither the file itself nor, for a
    /// path in a subdirectory (recursive outboxes), any directory on the way — and without
    /// blocking on a FIFO.
    package static func openForReading(_ path: RelativePath, in directory: String) throws -> Int32 {
        try kernel.openForReading(path, in: directory)
    }

    /// pread: up to `buffer.count` bytes of `fd` at `offset`; 0 at the end.
    package static func read(fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String?) throws -> Int {
        try kernel.read(fd: fd, into: buffer, at: offset, path: path)
    }

    package static func status(fd: Int32, path: String) throws -> Status { try kernel.status(fd: fd, path: path) }

    /// `lstat`: never follows a symlink, not even in a directory on the way.
    package static func status(_ path: RelativePath, in directory: String) throws -> Status {
        try kernel.status(path, in: directory)
    }

    package static func status(path: String) throws -> Status { try kernel.status(path: path) }

    /// `stat`, following symlinks: what a path leads to now (a secret file swapped by a symlink's
    /// rename changes here).
    package static func statusFollowingLinks(path: String) throws -> Status { try kernel.statusFollowingLinks(path: path) }

    package static func exists(_ path: RelativePath, in directory: String) -> Bool { kernel.exists(path, in: directory) }

    package static func readAll(_ path: RelativePath, in directory: String, limit: Int = 16 << 20) throws -> [UInt8] {
        try kernel.readAll(path, in: directory, limit: limit)
    }

    /// Renames; with `replace: false` fails with EEXIST rather than overwrite (RENAME_NOREPLACE).
    package static func rename(_ from: RelativePath, in fromDir: String, to: RelativePath, in toDir: String, replace: Bool) throws {
        try kernel.rename(from, in: fromDir, to: to, in: toDir, replace: replace)
    }

    /// link(2): a second name for the file at `existing` (a symlink itself is linked, not followed).
    package static func link(_ existing: RelativePath, in fromDir: String, to new: RelativePath, in toDir: String) throws {
        try kernel.link(existing, in: fromDir, to: new, in: toDir)
    }

    package static func unlink(_ path: RelativePath, in directory: String) throws { try kernel.unlink(path, in: directory) }

    /// fsync of a directory, making the renames and creations in it durable.
    package static func syncDirectoryAt(_ path: String) throws { try kernel.syncDirectoryAt(path) }

    /// `mkdir -p` with the given mode for what it creates.
    package static func makeDirectories(_ path: String, mode: UInt32 = 0o750) throws { try kernel.makeDirectories(path, mode: mode) }

    /// fsync of the directory that holds `name` inside `directory`.
    package static func syncDirectoryOf(_ name: RelativePath, in directory: String) throws {
        try kernel.syncDirectory(of: name, in: directory)
    }

    /// Creates the parent directories of `path` inside `directory` (recursive spools), mode 0750.
    package static func makeParents(of path: RelativePath, in directory: String) throws { try kernel.makeParents(of: path, in: directory) }

    /// Lists a directory (without `.` and `..`), names as raw bytes.
    package static func list(_ directory: String) throws -> [Entry] {
        try kernel.list(RelativePath(bytes: []), in: directory)
    }

    /// Lists `path` inside `directory` (the directory itself when `path` is empty).
    package static func list(_ path: RelativePath, in directory: String) throws -> [Entry] { try kernel.list(path, in: directory) }

    /// Calls `body` with each entry of `path` inside `directory` as readdir returns it, holding none.
    package static func forEachEntry(_ path: RelativePath, in directory: String, _ body: (Entry) throws -> Void) throws {
        try kernel.forEachEntry(path, in: directory, body)
    }
}
