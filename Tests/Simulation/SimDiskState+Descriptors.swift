@preconcurrency import Glibc
import UploaderSupport

/// How one descriptor of the simulated disk was opened: whether it writes, whether at the end,
/// and the offset of its next read(2) or write(2).
struct SimOpenFile: Sendable {
    /// The path it was opened by, for errors and traces.
    var display: String
    var writes: Bool
    var append: Bool
    var offset: Int64 = 0
}

/// The descriptor-level calls on the volatile state (`SimDisk+SystemCalls.swift`): open of any
/// kind, read(2) and write(2) at the descriptor's offset, and where a descriptor's path lies.
extension SimDiskState {
    /// A new descriptor for `inode`.
    mutating func open(_ inode: UInt64, display: String, writes: Bool, append: Bool) -> Int32 {
        let fd = nextDescriptor
        nextDescriptor += 1
        openFiles[fd] = inode
        descriptors[fd] = SimOpenFile(display: display, writes: writes, append: append)
        return fd
    }

    mutating func closeDescriptor(_ fd: Int32) {
        if let inode = openFiles[fd], fileLocks[inode] == fd { fileLocks[inode] = nil }
        openFiles.removeValue(forKey: fd)
        descriptors.removeValue(forKey: fd)
    }

    /// read(2): from the descriptor's offset, which moves on.
    mutating func readOn(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SimErrno) -> Int {
        let offset = descriptors[fd]?.offset ?? 0
        let n = try read(fd, into: buffer, at: offset)
        descriptors[fd]?.offset = offset + Int64(n)
        return n
    }

    /// write(2) of the first `count` of `bytes` at the descriptor's offset (its end under O_APPEND).
    mutating func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, count: Int) throws(SimErrno) -> Int {
        let inode = try openInode(fd)
        guard let open = descriptors[fd], open.writes else { throw SimErrno(EBADF) }
        guard nodes[inode]!.kind == .regular else { throw SimErrno(EINVAL) }
        var data = nodes[inode]!.content.data
        let start = open.append ? data.count : Int(open.offset)
        if data.count < start { data += [UInt8](repeating: 0, count: start - data.count) }
        let end = start + count
        let overlap = min(end, data.count) - start
        data.replaceSubrange(start..<(start + overlap), with: bytes[0..<count])
        setData(data, of: inode)
        descriptors[fd]?.offset = Int64(end)
        return count
    }

    /// The components from `/` of the directory `inode`, through the entries that name it now
    /// (a descriptor follows its directory through renames); ENOENT once nothing names it.
    func components(ofDirectory inode: UInt64) throws(SimErrno) -> [[UInt8]] {
        var parts: [[UInt8]] = []
        var current = inode
        while current != Self.root {
            let parent = nodes[current]!.parent
            guard let name = nodes[parent]!.entries.filter({ $0.value == current }).map(\.key)
                .min(by: { $0.lexicographicallyPrecedes($1) }) else { throw SimErrno(ENOENT) }
            parts.insert(name, at: 0)
            current = parent
        }
        return parts
    }
}
