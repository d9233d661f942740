@preconcurrency import Glibc
import UploaderSupport

/// The system calls, with their POSIX errors, on the volatile state. Each mutating one is
/// built from the primitives (`allocate`, `change`, `setData`, `touch`), so the power-cut
/// models see it; counting and crashing happen one level up, in `SimDisk`.
extension SimDiskState {
    /// The name a creating call may use: free of `.`/`..`, in an existing directory.
    private func creatable(_ parts: [[UInt8]]) throws(SimErrno) -> SimLocation {
        let location = try locate(parts, followLast: false)
        if location.inode != nil { throw SimErrno(EEXIST) }
        return location
    }

    /// mkdir(2), mode 0750.
    mutating func makeDirectory(_ parts: [[UInt8]]) throws(SimErrno) {
        let location = try creatable(parts)
        let inode = allocate(.directory, parent: location.directory)
        change([SimEntryChange(directory: location.directory, name: location.name, inode: inode)])
    }

    /// symlink(2) or mkfifo(3): a new inode of `kind` at `parts`.
    mutating func makeNode(_ kind: SimNode.Kind, at parts: [[UInt8]]) throws(SimErrno) {
        let location = try creatable(parts)
        let inode = allocate(kind, parent: location.directory)
        change([SimEntryChange(directory: location.directory, name: location.name, inode: inode)])
    }

    /// open(O_WRONLY | O_CREAT [| O_EXCL]): the inode to write, created empty if missing.
    /// Without `exclusive` a trailing symlink is followed and an existing file is reused (the
    /// caller truncates it); with it, any existing name fails with EEXIST.
    mutating func createFile(_ parts: [[UInt8]], exclusive: Bool) throws(SimErrno) -> UInt64 {
        let location = try locate(parts, followLast: !exclusive)
        if let existing = location.inode {
            if exclusive { throw SimErrno(EEXIST) }
            switch nodes[existing]!.kind {
            case .regular: return existing
            case .directory: throw SimErrno(EISDIR)
            case .fifo, .symlink: throw SimErrno(ENXIO)  // O_NONBLOCK write open of a FIFO with no reader
            }
        }
        if location.name.isEmpty { throw SimErrno(EISDIR) }
        let inode = allocate(.regular, parent: location.directory)
        change([SimEntryChange(directory: location.directory, name: location.name, inode: inode)])
        return inode
    }

    /// rename(2), or renameat2(RENAME_NOREPLACE) when `replace` is false.
    mutating func rename(_ from: [[UInt8]], to: [[UInt8]], replace: Bool) throws(SimErrno) {
        let source = try locate(from, followLast: false)
        guard let moving = source.inode else { throw SimErrno(ENOENT) }
        let target = try locate(to, followLast: false)
        if source.name.isEmpty || target.name.isEmpty { throw SimErrno(EBUSY) }
        let movingDirectory = nodes[moving]!.isDirectory
        if let existing = target.inode {
            if !replace { throw SimErrno(EEXIST) }
            if existing == moving { return }  // two names of one file: rename does nothing
            switch (movingDirectory, nodes[existing]!.isDirectory) {
            case (true, false): throw SimErrno(ENOTDIR)
            case (false, true): throw SimErrno(EISDIR)
            case (true, true) where !nodes[existing]!.entries.isEmpty: throw SimErrno(ENOTEMPTY)
            default: break
            }
        }
        if movingDirectory && isInside(target.directory, moving) { throw SimErrno(EINVAL) }
        // ext4's auto_da_alloc: a file renamed over another has its data allocated first, so
        // the commit that carries the rename carries its data (the replace-by-rename idiom).
        if target.inode != nil { delayedData.remove(moving) }
        change([SimEntryChange(directory: source.directory, name: source.name, inode: nil),
                SimEntryChange(directory: target.directory, name: target.name, inode: moving)])
        touch(moving)
    }

    /// unlink(2): a directory fails with EISDIR, as on Linux.
    mutating func unlink(_ parts: [[UInt8]]) throws(SimErrno) {
        let location = try locate(parts, followLast: false)
        guard let inode = location.inode else { throw SimErrno(ENOENT) }
        if location.name.isEmpty || nodes[inode]!.isDirectory { throw SimErrno(EISDIR) }
        change([SimEntryChange(directory: location.directory, name: location.name, inode: nil)])
        touch(inode)
    }

    /// link(2) (linkat without AT_SYMLINK_FOLLOW: a symlink is linked, not its target). `byProducer`:
    /// the producer links, who owns the foreign files; else the daemon, who owns the rest.
    mutating func link(_ existing: [[UInt8]], _ new: [[UInt8]], byProducer: Bool = false) throws(SimErrno) {
        guard let inode = try locate(existing, followLast: false).inode else { throw SimErrno(ENOENT) }
        if nodes[inode]!.isDirectory { throw SimErrno(EPERM) }
        // fs.protected_hardlinks = 1: a file of another user that we may not write is never linked.
        if nodes[inode]!.foreign != byProducer && nodes[inode]!.kind == .regular { throw SimErrno(EPERM) }
        let location = try creatable(new)
        change([SimEntryChange(directory: location.directory, name: location.name, inode: inode)])
        touch(inode)
    }

    /// renameat2(RENAME_EXCHANGE): both names must exist; they swap their inodes in one operation.
    mutating func exchange(_ a: [[UInt8]], _ b: [[UInt8]]) throws(SimErrno) {
        let first = try locate(a, followLast: false), second = try locate(b, followLast: false)
        guard let x = first.inode, let y = second.inode else { throw SimErrno(ENOENT) }
        if first.name.isEmpty || second.name.isEmpty { throw SimErrno(EBUSY) }
        if x == y { return }
        change([SimEntryChange(directory: first.directory, name: first.name, inode: y),
                SimEntryChange(directory: second.directory, name: second.name, inode: x)])
        touch(x)
        touch(y)
    }

    /// open(O_RDONLY | O_NOFOLLOW | O_NONBLOCK) of `parts`, whose components from `strictFrom`
    /// on are opened without following symlinks. A FIFO opens (read side, non-blocking), as on
    /// Linux; what it is shows in fstat.
    mutating func openForReading(_ parts: [[UInt8]], strictFrom: Int) throws(SimErrno) -> Int32 {
        guard let inode = try locate(parts, followLast: false, strictFrom: strictFrom).inode else { throw SimErrno(ENOENT) }
        if isSymlink(inode) { throw SimErrno(ELOOP) }
        let fd = nextDescriptor
        nextDescriptor += 1
        openFiles[fd] = inode
        return fd
    }

    func openInode(_ fd: Int32) throws(SimErrno) -> UInt64 {
        guard let inode = openFiles[fd] else { throw SimErrno(EBADF) }
        return inode
    }

    /// pread(2).
    func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SimErrno) -> Int {
        let inode = try openInode(fd)
        if nodes[inode]!.isDirectory { throw SimErrno(EISDIR) }
        if offset < 0 { throw SimErrno(EINVAL) }
        let data = nodes[inode]!.content.data
        guard offset < data.count else { return 0 }
        let start = Int(offset)
        let count = min(buffer.count, data.count - start)
        data.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + start, byteCount: count)
        }
        return count
    }

    /// opendir + readdir: every entry, sorted by name's bytes, with its d_type.
    func list(_ parts: [[UInt8]]) throws(SimErrno) -> [FileSystem.Entry] {
        let directory = try directory(at: parts)
        return nodes[directory]!.entries.sorted { Self.precedes($0.key, $1.key) }.map { name, inode in
            FileSystem.Entry(name: RelativePath(bytes: name), kind: nodes[inode]!.entryKind)
        }
    }
}

extension SimDiskState {
    /// Byte order of two names, as `lexicographicallyPrecedes` orders them, compared with `memcmp`:
    /// the generic comparison was a tenth of a debug build's simulation, every listing sorting.
    static func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        let common = min(a.count, b.count)
        let order = a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common) }
        }
        return order != 0 ? order < 0 : a.count < b.count
    }

    /// The regular files directly in `parts`, name and data, in no order; [] if it is no directory.
    func regularFiles(in parts: [[UInt8]]) -> [(name: [UInt8], data: [UInt8])] {
        guard let directory = try? directory(at: parts) else { return [] }
        return nodes[directory]!.entries.compactMap { name, inode in
            nodes[inode]!.kind == .regular ? (name, nodes[inode]!.content.data) : nil
        }
    }
}
