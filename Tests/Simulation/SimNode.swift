@preconcurrency import Glibc
import Foundation
import UploaderSupport

/// One inode of the simulated disk, in both of its versions: what the kernel has now
/// (volatile: every operation applies there at once) and what is on the platter (durable:
/// survives any power cut). The power-cut models choose between the two, entry by entry
/// and file by file (see "The disk model of the simulator" in docs/architecture.md).
struct SimNode: Sendable {
    enum Kind: Sendable, Equatable {
        case regular, directory, fifo
        case symlink(target: [UInt8])
    }

    let kind: Kind
    /// Data and times as the kernel has them.
    var content: SimContent
    /// Data and times as the last fsync (or journal commit) left them on disk.
    var durableContent: SimContent
    /// A directory's entries, name → inode, as the kernel has them.
    var entries: [[UInt8]: UInt64] = [:]
    /// A directory's entries as its last fsync (or journal commit) left them on disk.
    var durableEntries: [[UInt8]: UInt64] = [:]
    /// A directory's parent (for `..`); the root is its own parent.
    var parent: UInt64
    /// Entries naming this inode (for a directory: counted as the kernel does, see `SimDiskState.linkCount`).
    var links = 0
    /// Written by a producer who is another user (mode 0644): the daemon, not root, may read it but
    /// not link it (`fs.protected_hardlinks = 1`).
    var foreign = false

    init(kind: Kind, parent: UInt64, content: SimContent) {
        self.kind = kind
        self.parent = parent
        self.content = content
        self.durableContent = content
    }

    var isDirectory: Bool { kind == .directory }
}

/// What a file holds and when it last changed: the part of an inode a power cut can roll back
/// as one piece (data with the times that went with it, never a torn mix).
struct SimContent: Sendable, Equatable {
    var data: [UInt8]
    var mtimeNanos: Int64
    var ctimeNanos: Int64

    init(data: [UInt8] = [], at nanos: Int64) {
        self.data = data
        self.mtimeNanos = nanos
        self.ctimeNanos = nanos
    }
}

/// One directory entry set (`inode`) or removed (`inode == nil`): the unit of metadata change.
/// A rename is two of them; the journal keeps them grouped by operation.
struct SimEntryChange: Sendable {
    var directory: UInt64
    var name: [UInt8]
    var inode: UInt64?
}

/// An errno from inside the model; `SimDisk` turns it into a `SystemError` naming the call and path.
struct SimErrno: Error {
    let code: Int32
    init(_ code: Int32) { self.code = code }
}

extension SimNode {
    /// What `lstat`/`fstat` would say about this inode.
    func status(inode: UInt64, device: UInt64, links: Int) -> FileSystem.Status {
        var st = stat()
        switch kind {
        case .regular: st.st_mode = S_IFREG | 0o640
        case .directory: st.st_mode = S_IFDIR | 0o750
        case .fifo: st.st_mode = S_IFIFO | 0o640
        case .symlink: st.st_mode = S_IFLNK | 0o777
        }
        switch kind {
        case .regular: st.st_size = numericCast(content.data.count)
        case .directory: st.st_size = 4096
        case .fifo: st.st_size = 0
        case .symlink(let target): st.st_size = numericCast(target.count)
        }
        st.st_mtim = SimNode.timespec(content.mtimeNanos)
        st.st_ctim = SimNode.timespec(content.ctimeNanos)
        st.st_dev = numericCast(device)
        st.st_ino = numericCast(inode)
        st.st_nlink = numericCast(links)
        if foreign {
            st.st_uid = SimNode.producerUID
            st.st_mode = (st.st_mode & S_IFMT) | 0o644
        }
        return FileSystem.Status(st)
    }

    /// The owner a foreign file shows; the daemon's own files show uid 0 as before.
    static let producerUID: uid_t = 1001

    private static func timespec(_ nanos: Int64) -> Glibc.timespec {
        let seconds = nanos >= 0 ? nanos / 1_000_000_000 : (nanos - 999_999_999) / 1_000_000_000
        return Glibc.timespec(tv_sec: numericCast(seconds), tv_nsec: numericCast(nanos - seconds * 1_000_000_000))
    }

    /// `d_type` as `readdir` reports it.
    var entryKind: FileSystem.Kind {
        switch kind {
        case .regular: return .regular
        case .directory: return .directory
        case .symlink: return .symlink
        case .fifo: return .other
        }
    }
}
