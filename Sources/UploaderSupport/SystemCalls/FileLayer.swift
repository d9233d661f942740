import Foundation
import Synchronization

/// The file calls the spool and the daemon make — open without following symlinks, read a
/// small file whole, create and write and fsync, rename, link, unlink, fsync a directory, list —
/// built once on the system calls of `Calls`: on the kernel in production (`LocalFileSystem`),
/// on the simulated disk in the simulator, so the same code runs in both.
///
/// Every failure is a `SystemError` naming the call and the path. Paths are (directory,
/// `RelativePath`) pairs so names that are not UTF-8 survive intact.
package struct FileLayer<Calls: SystemCalls>: Sendable {
    package let calls: Calls

    package init(calls: Calls) { self.calls = calls }

    /// Runs one system call, its errno turned into a `SystemError` for `operation` on `path`.
    @inline(__always)
    func call<T>(_ operation: String, _ path: @autoclosure () -> String, _ body: () throws(Errno) -> T) throws(SystemError) -> T {
        do {
            return try body()
        } catch {
            throw SystemError(operation, path: path(), code: error)
        }
    }

    /// Opens `directory/path` with `flags`; `operation` names the call in the error ("create" for an O_CREAT).
    package func open(_ path: RelativePath, in directory: String, _ flags: OpenFlags, mode: UInt32 = 0,
                      operation: String = "open") throws -> OpenFile<Calls> {
        let fd = try path.withCString(in: directory) { cpath in
            try call(operation, path.displayed(in: directory)) { () throws(Errno) in
                try calls.open(cpath, at: .workingDirectory, flags, mode: mode)
            }
        }
        return OpenFile(fd, on: calls)
    }

    /// Opens the plain path `path`.
    package func open(path: String, _ flags: OpenFlags, mode: UInt32 = 0) throws -> OpenFile<Calls> {
        let fd = try call("open", path) { () throws(Errno) in try calls.open(path, at: .workingDirectory, flags, mode: mode) }
        return OpenFile(fd, on: calls)
    }

    /// openat of the single name `name` relative to the open directory `directory`.
    package func open(at name: RelativePath, in directory: borrowing OpenFile<Calls>, _ flags: OpenFlags,
                      display: String) throws -> OpenFile<Calls> {
        let parent = directory.number
        let fd = try name.withCString(in: "") { cname in
            try call("open", display) { () throws(Errno) in try calls.open(cname, at: parent, flags, mode: 0) }
        }
        return OpenFile(fd, on: calls)
    }

    /// Opens a file for reading without following a symlink — neither the file itself nor, for a
    /// path in a subdirectory (recursive outboxes), any directory on the way — and without
    /// blocking on a FIFO. The caller closes the number it gets (`close`).
    package func openForReading(_ path: RelativePath, in directory: String) throws -> Int32 {
        let flags: OpenFlags = [.readOnly, .noFollow, .nonBlocking]
        guard path.parent != nil else {
            return try path.withCString(in: directory) { cpath in
                try call("open", path.displayed(in: directory)) { () throws(Errno) in
                    try calls.open(cpath, at: .workingDirectory, flags, mode: 0)
                }
            }.rawValue
        }
        let parent = try openParent(of: path, in: directory)
        let number = parent.number
        return try path.name.withCString(in: "") { cname in
            try call("open", path.displayed(in: directory)) { () throws(Errno) in try calls.open(cname, at: number, flags, mode: 0) }
        }.rawValue
    }

    /// Opens the directory holding `path` one component at a time with O_NOFOLLOW, so a
    /// directory swapped for a symlink (to /etc, say) fails with ELOOP/ENOTDIR instead of being walked.
    package func openParent(of path: RelativePath, in directory: String) throws -> OpenFile<Calls> {
        let display = path.displayed(in: directory)
        var fd = try open(path: directory, [.readOnly, .directory])
        for component in path.components.dropLast() {
            // The next directory is opened before this one closes (the assignment closes it).
            fd = try open(at: RelativePath(bytes: component), in: fd, [.readOnly, .directory, .noFollow], display: display)
        }
        return fd
    }

    package func close(_ fd: Int32) { calls.close(SystemDescriptor(rawValue: fd)) }

    package func status(fd: Int32, path: String) throws -> FileSystem.Status {
        try call("fstat", path) { () throws(Errno) in try calls.status(of: SystemDescriptor(rawValue: fd)) }
    }

    /// `lstat`: never follows a symlink, not even in a directory on the way (see `openParent`).
    package func status(_ path: RelativePath, in directory: String) throws -> FileSystem.Status {
        let display = path.displayed(in: directory)
        guard path.parent != nil else {
            return try path.withCString(in: directory) { cpath in
                try call("lstat", display) { () throws(Errno) in try calls.status(cpath, at: .workingDirectory, followLast: false) }
            }
        }
        let parent = try openParent(of: path, in: directory)
        let number = parent.number
        return try path.name.withCString(in: "") { name in
            try call("lstat", display) { () throws(Errno) in try calls.status(name, at: number, followLast: false) }
        }
    }

    /// lstat of a plain path.
    package func status(path: String) throws -> FileSystem.Status {
        try call("lstat", path) { () throws(Errno) in try calls.status(path, at: .workingDirectory, followLast: false) }
    }

    /// `stat`, following symlinks: what a path leads to now.
    package func statusFollowingLinks(path: String) throws -> FileSystem.Status {
        try call("stat", path) { () throws(Errno) in try calls.status(path, at: .workingDirectory, followLast: true) }
    }

    package func exists(_ path: RelativePath, in directory: String) -> Bool {
        path.withCString(in: directory) { cpath in (try? calls.status(cpath, at: .workingDirectory, followLast: false)) != nil }
    }

    /// The directory is opened once and each file looked up relative to it: the kernel then walks
    /// one name per file, not the spool's whole path (a third of a 100,000-file start-up).
    /// A hint for `order` only: nil (gone, or cannot be looked at) ranks as zeros, and the
    /// file's claim says what is wrong with it.
    package func statuses<Kept: Sendable>(_ paths: [RelativePath], in directory: String,
                                          keeping keep: @escaping @Sendable (FileSystem.Status?) -> Kept) -> [Kept] {
        guard let opened = try? open(path: directory, [.readOnly, .directory]) else {
            return paths.map { keep(try? status($0, in: directory)) }
        }
        let dir = opened.number
        let lookUp = { @Sendable [self] (path: RelativePath) -> Kept in
            // Below a subdirectory, the careful way (no symlinked directory on the way).
            guard path.parent == nil else { return keep(try? status(path, in: directory)) }
            return keep(path.withCString(in: "") { name in try? calls.status(name, at: dir, followLast: false) })
        }
        // A big backlog is looked up on every core at once: it stands between start-up and the
        // first upload (`order` ranks by what each lstat says).
        let parts = min(ProcessInfo.processInfo.activeProcessorCount, paths.count / 4096)
        guard parts > 1 else { return paths.map(lookUp) }
        let found = FoundParts<Kept>()
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let chunk = paths[(paths.count * part / parts)..<(paths.count * (part + 1) / parts)]
            found.set(part, chunk.map(lookUp))
        }
        var all: [Kept] = []
        all.reserveCapacity(paths.count)
        for part in 0..<parts { all.append(contentsOf: found.get(part)) }
        return all
    }

    /// pread: up to `buffer.count` bytes at `offset`; 0 at the end.
    package func read(fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String?) throws -> Int {
        try call("read", path ?? "fd \(fd)") { () throws(Errno) in try calls.read(SystemDescriptor(rawValue: fd), into: buffer, at: offset) }
    }

    /// The whole content of a small regular file (a manifest), up to 16 MiB.
    package func readAll(_ path: RelativePath, in directory: String) throws -> [UInt8] {
        try readAll(path, in: directory, limit: 16 << 20)
    }

    /// The whole content of a small regular file, up to `limit` bytes.
    package func readAll(_ path: RelativePath, in directory: String, limit: Int) throws -> [UInt8] {
        let display = path.displayed(in: directory)
        let file = OpenFile(SystemDescriptor(rawValue: try openForReading(path, in: directory)), on: calls)
        let fd = file.number
        let st = try call("fstat", display) { () throws(Errno) in try calls.status(of: fd) }
        guard st.kind == .regular else { throw SystemError("read", path: display, code: .invalid) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while out.count < limit {
            let n = try buffer.withUnsafeMutableBytes { raw in try call("read", display) { () throws(Errno) in try calls.read(fd, into: raw) } }
            if n == 0 { break }
            out.append(contentsOf: buffer[0..<n])
        }
        return out
    }

    /// Renames; with `replace: false` fails with EEXIST rather than overwrite (RENAME_NOREPLACE).
    package func rename(_ from: RelativePath, in fromDir: String, to: RelativePath, in toDir: String, replace: Bool) throws {
        try from.withCString(in: fromDir) { src in
            try to.withCString(in: toDir) { dst in
                try call("rename", "\(from.displayed(in: fromDir)) to \(to.displayed(in: toDir))") { () throws(Errno) in
                    try calls.rename(src, to: dst, replace ? .replace : .noReplace)
                }
            }
        }
    }

    /// renameat2(RENAME_EXCHANGE): `a` and `b` swap the files they name, in one step.
    package func exchange(_ a: RelativePath, in aDir: String, with b: RelativePath, in bDir: String) throws {
        try a.withCString(in: aDir) { pa in
            try b.withCString(in: bDir) { pb in
                try call("exchange", "\(a.displayed(in: aDir)) with \(b.displayed(in: bDir))") { () throws(Errno) in
                    try calls.rename(pa, to: pb, .exchange)
                }
            }
        }
    }

    /// link(2): a second name for the file at `existing` (a symlink itself is linked, not followed).
    package func link(_ existing: RelativePath, in fromDir: String, to new: RelativePath, in toDir: String) throws {
        try existing.withCString(in: fromDir) { src in
            try new.withCString(in: toDir) { dst in
                try call("link", "\(existing.displayed(in: fromDir)) to \(new.displayed(in: toDir))") { () throws(Errno) in
                    try calls.link(src, to: dst)
                }
            }
        }
    }

    package func unlink(_ path: RelativePath, in directory: String) throws {
        try path.withCString(in: directory) { cpath in
            try call("unlink", path.displayed(in: directory)) { () throws(Errno) in try calls.unlink(cpath) }
        }
    }

    /// unlink(2) of a plain path.
    package func unlink(path: String) throws {
        try call("unlink", path) { () throws(Errno) in try calls.unlink(path) }
    }
}

/// What each part of a parallel lookup kept (`FileLayer.statuses`).
private final class FoundParts<Kept: Sendable>: Sendable {
    private let parts = Mutex<[Int: [Kept]]>([:])
    func set(_ part: Int, _ kept: [Kept]) { parts.withLock { $0[part] = kept } }
    func get(_ part: Int) -> [Kept] { parts.withLock { $0[part] ?? [] } }
}
