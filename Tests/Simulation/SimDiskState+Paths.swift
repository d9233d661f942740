@preconcurrency import Glibc
import UploaderSupport

/// Where a path leads: the directory that holds its last component, that name, and the inode
/// it names (nil when nothing does). For `/`, `.` and `..` the name is empty and the inode is
/// that directory.
struct SimLocation {
    var directory: UInt64
    var name: [UInt8]
    var inode: UInt64?
}

/// Path lookup as the kernel does it, on raw bytes: symlinks followed on the way (up to 40),
/// or refused where the real code opens a component with O_NOFOLLOW.
extension SimDiskState {
    static let slash = UInt8(ascii: "/")

    /// `directory` joined with `path`, split into components.
    static func components(_ directory: String, _ path: RelativePath) -> [[UInt8]] {
        components(absolute: Array(directory.utf8)) + path.components
    }

    /// `path` split at each slash, empty components left out. Every simulated system call splits
    /// its path: the slashes are found with `memchr`, which a debug build runs as fast as a release.
    static func components(absolute path: [UInt8]) -> [[UInt8]] {
        path.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return [] }
            var parts: [[UInt8]] = []
            var start = 0
            while start < buffer.count {
                let rest = UnsafeRawPointer(base + start)
                let end = memchr(rest, Int32(slash), buffer.count - start).map { start + rest.distance(to: UnsafeRawPointer($0)) } ?? buffer.count
                if end > start { parts.append(Array(UnsafeBufferPointer(start: base + start, count: end - start))) }
                start = end + 1
            }
            return parts
        }
    }

    /// Looks `parts` up from the root.
    ///
    /// - Parameters:
    ///   - followLast: follow a symlink in the last component (stat, opendir, open without O_NOFOLLOW).
    ///   - strictFrom: components at this index and after, but not the last, must be real
    ///     directories: a symlink there fails with ENOTDIR, as `FileSystem.openParent`'s
    ///     openat(O_DIRECTORY | O_NOFOLLOW) does.
    func locate(_ parts: [[UInt8]], followLast: Bool, strictFrom: Int = Int.max) throws(SimErrno) -> SimLocation {
        var budget = 40
        return try walk(parts[...], from: Self.root, followLast: followLast, strictFrom: strictFrom, budget: &budget)
    }

    private func walk(_ parts: ArraySlice<[UInt8]>, from start: UInt64, followLast: Bool, strictFrom: Int,
                      budget: inout Int) throws(SimErrno) -> SimLocation {
        var directory = start
        guard let lastIndex = parts.indices.last else { return SimLocation(directory: directory, name: [], inode: directory) }
        for index in parts.indices {
            let name = parts[index]
            let isLast = index == lastIndex
            if name == [0x2E] || name == [0x2E, 0x2E] {
                if name.count == 2 { directory = nodes[directory]!.parent }
                if isLast { return SimLocation(directory: directory, name: [], inode: directory) }
                continue
            }
            let child = nodes[directory]!.entries[name]
            if isLast, !followLast || child.map({ !isSymlink($0) }) ?? true {
                return SimLocation(directory: directory, name: name, inode: child)
            }
            guard let child else { throw SimErrno(ENOENT) }
            switch nodes[child]!.kind {
            case .directory:
                directory = child
            case .symlink(let target):
                if !isLast && index >= strictFrom { throw SimErrno(ENOTDIR) }
                budget -= 1
                if budget < 0 { throw SimErrno(ELOOP) }
                let from = target.first == Self.slash ? Self.root : directory
                let found = try walk(Self.components(absolute: target)[...], from: from, followLast: true, strictFrom: Int.max,
                                     budget: &budget)
                if isLast { return found }
                guard let inode = found.inode else { throw SimErrno(ENOENT) }
                guard nodes[inode]!.isDirectory else { throw SimErrno(ENOTDIR) }
                directory = inode
            case .regular, .fifo:
                throw SimErrno(ENOTDIR)
            }
        }
        return SimLocation(directory: directory, name: [], inode: directory)
    }

    func isSymlink(_ inode: UInt64) -> Bool {
        if case .symlink = nodes[inode]!.kind { return true }
        return false
    }

    /// The existing directory at `parts` (symlinks followed), as opendir or open(O_DIRECTORY) finds it.
    func directory(at parts: [[UInt8]]) throws(SimErrno) -> UInt64 {
        guard let inode = try locate(parts, followLast: true).inode else { throw SimErrno(ENOENT) }
        guard nodes[inode]!.isDirectory else { throw SimErrno(ENOTDIR) }
        return inode
    }

    /// True when `inode` is `ancestor` or lies below it.
    func isInside(_ inode: UInt64, _ ancestor: UInt64) -> Bool {
        var current = inode
        while true {
            if current == ancestor { return true }
            let parent = nodes[current]!.parent
            if parent == current { return false }
            current = parent
        }
    }
}
