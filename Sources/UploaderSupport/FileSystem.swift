@preconcurrency import Glibc
import CSysShims
import Foundation

/// The libc file calls the spool needs, each retried on EINTR and throwing `SystemError`.
///
/// Paths are (directory, `RelativePath`) pairs so names that are not UTF-8 survive intact.
package enum FileSystem {
    /// Kind of a directory entry or an open file, from `st_mode`.
    package enum Kind: Sendable, Equatable { case regular, directory, symlink, other }

    package struct Status: Sendable, Equatable {
        package var kind: Kind
        package var size: Int64
        /// Modification time in nanoseconds since the epoch.
        package var mtimeNanos: Int64
        /// Status-change time in nanoseconds: moves on at every write, and no tool can set it back.
        package var ctimeNanos: Int64
        package var device: UInt64
        package var inode: UInt64
        package var links: UInt64
        /// The `S_IFMT` bits of `st_mode`, to name what a non-regular entry is.
        package var format: UInt32
        /// `st_uid`: whose file it is (a producer's file is not ours to link, see `mayLink`).
        package var owner: UInt32
        /// The permission bits of `st_mode` (`0o7777`).
        package var permissions: UInt32
        /// `st_gid`: the file's group (a producers' outbox is in theirs).
        package var group: UInt32

        /// From what `stat`/`lstat`/`fstat` filled in (a simulated disk fills one in too).
        package init(_ st: stat) {
            switch st.st_mode & S_IFMT {
            case S_IFREG: kind = .regular
            case S_IFDIR: kind = .directory
            case S_IFLNK: kind = .symlink
            default: kind = .other
            }
            size = Int64(st.st_size)
            mtimeNanos = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
            ctimeNanos = Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)
            device = UInt64(st.st_dev)
            inode = UInt64(st.st_ino)
            links = UInt64(st.st_nlink)
            format = UInt32(st.st_mode & S_IFMT)
            owner = UInt32(st.st_uid)
            permissions = UInt32(st.st_mode & 0o7777)
            group = UInt32(st.st_gid)
        }

        /// What the entry is, in words (`symlink`, `FIFO`, `socket`, `character device`…), for refusals.
        package var formatName: String {
            switch mode_t(format) {
            case S_IFREG: return "regular file"
            case S_IFDIR: return "directory"
            case S_IFLNK: return "symlink"
            case S_IFIFO: return "FIFO"
            case S_IFSOCK: return "socket"
            case S_IFCHR: return "character device"
            case S_IFBLK: return "block device"
            default: return "special file"
            }
        }

        package var mtime: Date { Date(timeIntervalSince1970: Double(mtimeNanos) / 1e9) }
        /// The mtime as the manifest writes it (milliseconds).
        package var mtimeText: String { Timestamp.format(mtime) }
    }

    /// Opens a file for reading without following a symlink — neither the file itself nor, for a
    /// path in a subdirectory (recursive outboxes), any directory on the way — and without
    /// blocking on a FIFO.
    package static func openForReading(_ path: RelativePath, in directory: String) throws -> Int32 {
        let flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
        guard path.parent != nil else {
            return try path.withCString(in: directory) { cpath in
                try retryingEINTR("open", path: path.displayed(in: directory)) { open(cpath, flags) }
            }
        }
        let parent = try openParent(of: path, in: directory)
        return try parent.open(at: path.name, flags, display: path.displayed(in: directory)).release()
    }

    /// Opens the directory holding `path` one component at a time with O_NOFOLLOW, so a
    /// directory swapped for a symlink (to /etc, say) fails with ELOOP/ENOTDIR instead of being walked.
    package static func openParent(of path: RelativePath, in directory: String) throws -> FileDescriptor {
        let display = path.displayed(in: directory)
        var fd = try FileDescriptor.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        for component in path.components.dropLast() {
            // The next directory is opened before this one closes (the assignment closes it).
            fd = try fd.open(at: RelativePath(bytes: component), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, display: display)
        }
        return fd
    }

    package static func status(fd: Int32, path: String) throws -> Status {
        var st = stat()
        try retryingEINTR("fstat", path: path) { fstat(fd, &st) }
        return Status(st)
    }

    /// `lstat`: never follows a symlink, not even in a directory on the way (see `openParent`).
    package static func status(_ path: RelativePath, in directory: String) throws -> Status {
        var st = stat()
        guard path.parent != nil else {
            try path.withCString(in: directory) { cpath in
                _ = try retryingEINTR("lstat", path: path.displayed(in: directory)) { lstat(cpath, &st) }
            }
            return Status(st)
        }
        let parent = try openParent(of: path, in: directory)
        try path.name.withCString(in: "") { name in
            _ = try retryingEINTR("lstat", path: path.displayed(in: directory)) { fstatat(parent.rawValue, name, &st, AT_SYMLINK_NOFOLLOW) }
        }
        return Status(st)
    }

    package static func status(path: String) throws -> Status {
        var st = stat()
        try retryingEINTR("lstat", path: path) { lstat(path, &st) }
        return Status(st)
    }

    /// `stat`, following symlinks: what a path leads to now (a secret file swapped by a symlink's
    /// rename changes here).
    package static func statusFollowingLinks(path: String) throws -> Status {
        var st = stat()
        try retryingEINTR("stat", path: path) { stat(path, &st) }
        return Status(st)
    }

    package static func exists(_ path: RelativePath, in directory: String) -> Bool {
        var st = stat()
        return path.withCString(in: directory) { lstat($0, &st) } == 0
    }

    package static func readAll(_ path: RelativePath, in directory: String, limit: Int = 16 << 20) throws -> [UInt8] {
        let display = path.displayed(in: directory)
        let file = FileDescriptor(adopting: try openForReading(path, in: directory))
        let st = try status(fd: file.rawValue, path: display)
        guard st.kind == .regular else { throw SystemError("read", path: display, code: .invalid) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while out.count < limit {
            let n = try buffer.withUnsafeMutableBytes { raw in
                try retryingEINTR("read", path: display) { read(file.rawValue, raw.baseAddress, raw.count) }
            }
            if n == 0 { break }
            out.append(contentsOf: buffer[0..<n])
        }
        return out
    }

    /// Renames; with `replace: false` fails with EEXIST rather than overwrite (RENAME_NOREPLACE).
    package static func rename(_ from: RelativePath, in fromDir: String, to: RelativePath, in toDir: String, replace: Bool) throws {
        try from.withCString(in: fromDir) { src in
            try to.withCString(in: toDir) { dst in
                _ = try retryingEINTR("rename", path: "\(from.displayed(in: fromDir)) to \(to.displayed(in: toDir))") {
                    replace ? Glibc.rename(src, dst) : uploader_rename_noreplace(AT_FDCWD, src, AT_FDCWD, dst)
                }
            }
        }
    }

    /// link(2): a second name for the file at `existing` (a symlink itself is linked, not followed).
    package static func link(_ existing: RelativePath, in fromDir: String, to new: RelativePath, in toDir: String) throws {
        try existing.withCString(in: fromDir) { src in
            try new.withCString(in: toDir) { dst in
                _ = try retryingEINTR("link", path: "\(existing.displayed(in: fromDir)) to \(new.displayed(in: toDir))") {
                    linkat(AT_FDCWD, src, AT_FDCWD, dst, 0)
                }
            }
        }
    }

    package static func unlink(_ path: RelativePath, in directory: String) throws {
        try path.withCString(in: directory) { cpath in
            _ = try retryingEINTR("unlink", path: path.displayed(in: directory)) { Glibc.unlink(cpath) }
        }
    }

    /// fsync of a directory, making the renames and creations in it durable.
    package static func syncDirectoryAt(_ path: String) throws {
        let directory = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try directory.sync(display: path)
    }

    /// `mkdir -p` with the given mode for what it creates.
    package static func makeDirectories(_ path: String, mode: mode_t = 0o750) throws {
        var st = stat()
        if stat(path, &st) == 0 {
            if st.st_mode & S_IFMT == S_IFDIR { return }
            throw SystemError("mkdir", path: path, code: .notDirectory)
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty && parent != path { try makeDirectories(parent, mode: mode) }
        if mkdir(path, mode) != 0 && Errno.current != .exists { throw SystemError("mkdir", path: path) }
    }

    /// fsync of the directory that holds `name` inside `directory`.
    package static func syncDirectoryOf(_ name: RelativePath, in directory: String) throws {
        guard let parent = name.parent else { return try syncDirectoryAt(directory) }
        let fd = try FileDescriptor.open(parent, in: directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try fd.sync(display: parent.displayed(in: directory))
    }

    /// Creates the parent directories of `path` inside `directory` (recursive spools), mode 0750.
    package static func makeParents(of path: RelativePath, in directory: String) throws {
        let parts = path.components.dropLast()
        var current = RelativePath(bytes: [])
        for part in parts {
            current = current.appending(RelativePath(bytes: part))
            let made = current
            try made.withCString(in: directory) { cpath in
                if mkdir(cpath, 0o750) != 0 && Errno.current != .exists {
                    throw SystemError("mkdir", path: made.displayed(in: directory))
                }
            }
        }
    }

    /// One directory entry: its name's bytes and what `d_type` says it is.
    package struct Entry: Sendable {
        package var name: RelativePath
        package var kind: Kind?

        package init(name: RelativePath, kind: Kind?) {
            self.name = name
            self.kind = kind
        }
    }

    /// Lists a directory (without `.` and `..`), names as raw bytes.
    package static func list(_ directory: String) throws -> [Entry] {
        try list(RelativePath(bytes: []), in: directory)
    }

    /// Lists `path` inside `directory` (the directory itself when `path` is empty).
    package static func list(_ path: RelativePath, in directory: String) throws -> [Entry] {
        var entries: [Entry] = []
        try forEachEntry(path, in: directory) { entries.append($0) }
        return entries
    }

    /// Calls `body` with each entry of `path` inside `directory` as readdir returns it, holding
    /// none of them: a directory of a million names costs one entry of memory, not a million.
    /// Entries removed meanwhile (by `body` too) may or may not be seen; none is seen twice.
    package static func forEachEntry(_ path: RelativePath, in directory: String, _ body: (Entry) throws -> Void) throws {
        let dir = path.bytes.isEmpty ? opendir(directory) : path.withCString(in: directory) { opendir($0) }
        guard let dir else { throw SystemError("opendir", path: path.displayed(in: directory)) }
        defer { closedir(dir) }
        while true {
            Errno.current = Errno(rawValue: 0)
            guard let entry = readdir(dir) else {
                if Errno.current.rawValue != 0 { throw SystemError("readdir", path: path.displayed(in: directory)) }
                break
            }
            let name: [UInt8] = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                let bytes = raw.bindMemory(to: UInt8.self)
                let length = bytes.firstIndex(of: 0) ?? bytes.count
                return Array(bytes[0..<length])
            }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            let kind: Kind?
            switch Int32(entry.pointee.d_type) {
            case Int32(DT_REG): kind = .regular
            case Int32(DT_DIR): kind = .directory
            case Int32(DT_LNK): kind = .symlink
            case Int32(DT_UNKNOWN): kind = nil
            default: kind = .other
            }
            try body(Entry(name: RelativePath(bytes: name), kind: kind))
        }
    }
}
