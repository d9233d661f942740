@preconcurrency import Glibc
import Foundation

/// What the system calls say about a file (`stat`) and a directory entry (`readdir`), as values
/// the rest of the code reads without libc.
extension FileSystem {
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

    /// One directory entry: its name's bytes and what `d_type` says it is.
    package struct Entry: Sendable {
        package var name: RelativePath
        package var kind: Kind?

        package init(name: RelativePath, kind: Kind?) {
            self.name = name
            self.kind = kind
        }
    }
}
