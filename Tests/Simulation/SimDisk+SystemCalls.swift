@preconcurrency import Glibc
import UploaderSupport

/// The system calls on the simulated disk, below production's file layer (`FileLayer`): each
/// call that changes the disk or its durability is one counted operation (one crash point),
/// with the faults a disk gives (ENOSPC and EIO, short writes, a failed fsync); the reads are
/// refused only once the process is dead. The simulator's cwd is `/`.
extension SimDisk: SystemCalls {
    /// A path's components from `/` (relative to `directory` unless absolute), and its text for errors.
    private func resolve(_ path: UnsafePointer<CChar>, at directory: SystemDescriptor) throws(Errno) -> (parts: [[UInt8]], display: String) {
        let bytes = Array(UnsafeBufferPointer(start: path, count: strlen(path))).map { UInt8(bitPattern: $0) }
        var parts = SimDiskState.components(absolute: bytes)
        if bytes.first != SimDiskState.slash && directory != .workingDirectory {
            let base = try syscall(counted: false, "open", "fd \(directory.rawValue)") { state in
                try state.components(ofDirectory: try state.openInode(directory.rawValue))
            }
            parts = base + parts
        }
        return (parts, "/" + parts.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "/"))
    }

    /// The path `fd` was opened by (read before the gate, which holds the state's lock).
    private func shown(_ fd: SystemDescriptor) -> String {
        state.withLock { $0.descriptors[fd.rawValue]?.display } ?? "fd \(fd.rawValue)"
    }

    /// One call through the gate (`operation` when `counted`, else `reading`), its failure as an errno.
    private func syscall<R: Sendable>(counted: Bool, _ call: String, _ path: String,
                                      _ body: (inout SimDiskState) throws -> R) throws(Errno) -> R {
        do {
            return counted ? try operation(call, path, body) : try reading(call, path, body)
        } catch let error as SystemError {
            throw error.code
        } catch {
            throw Errno.io
        }
    }

    func open(_ path: UnsafePointer<CChar>, at directory: SystemDescriptor, _ flags: OpenFlags, mode: UInt32) throws(Errno) -> SystemDescriptor {
        let (parts, display) = try resolve(path, at: directory)
        let noFollow = flags.contains(.noFollow)
        guard flags.contains(.create) else {
            return SystemDescriptor(rawValue: try syscall(counted: false, "open", display) { state in
                guard let inode = try state.locate(parts, followLast: !noFollow).inode else { throw SimErrno(ENOENT) }
                // As Linux's do_open: O_DIRECTORY's check comes first (a symlink there is ENOTDIR).
                if flags.contains(.directory) && !state.nodes[inode]!.isDirectory { throw SimErrno(ENOTDIR) }
                if noFollow && state.isSymlink(inode) { throw SimErrno(ELOOP) }
                if flags.writes && state.nodes[inode]!.isDirectory { throw SimErrno(EISDIR) }
                return state.open(inode, display: display, writes: flags.writes, append: flags.contains(.append))
            })
        }
        let exclusive = flags.contains(.exclusive)
        let fault = fault(at: .allocate)
        return SystemDescriptor(rawValue: try syscall(counted: true, exclusive ? "create" : "open", display) { state in
            let existing = try state.locate(parts, followLast: !noFollow && !exclusive).inode
            if exclusive || existing == nil { try Self.refuse(fault) }
            if noFollow, let existing, state.isSymlink(existing) { throw SimErrno(exclusive ? EEXIST : ELOOP) }
            let inode = try state.createFile(parts, exclusive: exclusive)
            if flags.contains(.truncate) { state.setData([], of: inode) }
            return state.open(inode, display: display, writes: flags.writes, append: flags.contains(.append))
        })
    }

    func close(_ fd: SystemDescriptor) {
        state.withLock { $0.closeDescriptor(fd.rawValue) }
    }

    /// flock(2) across the machine's processes: one holder per inode, let go at its close.
    func tryLock(_ fd: SystemDescriptor) throws(Errno) -> Bool {
        try syscall(counted: true, "flock", shown(fd)) { state in
            let inode = try state.openInode(fd.rawValue)
            if let holder = state.fileLocks[inode], holder != fd.rawValue { return false }
            state.fileLocks[inode] = fd.rawValue
            return true
        }
    }

    func truncate(_ fd: SystemDescriptor, to size: Int64) throws(Errno) {
        try syscall(counted: true, "truncate", shown(fd)) { state in
            let inode = try state.openInode(fd.rawValue)
            state.setData(Array(state.nodes[inode]!.content.data.prefix(Int(size))), of: inode)
        }
    }

    func read(_ fd: SystemDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try syscall(counted: false, "read", shown(fd)) { state in try state.readOn(fd.rawValue, into: buffer) }
    }

    func read(_ fd: SystemDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(Errno) -> Int {
        let fault = fault(at: .read)
        return try syscall(counted: false, "read", shown(fd)) { state in
            try Self.refuse(fault)
            return try state.read(fd.rawValue, into: buffer, at: offset)
        }
    }

    /// A short write takes half of what it was given (when that is more than one byte); ENOSPC or EIO none of it.
    func write(_ fd: SystemDescriptor, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        let fault = fault(at: .write)
        return try syscall(counted: true, "write", shown(fd)) { state in
            switch fault {
            case .noSpace: throw SimErrno(ENOSPC)
            case .ioError: throw SimErrno(EIO)
            case .shortWrite where bytes.count > 1: return try state.write(fd.rawValue, bytes, count: bytes.count / 2)
            default: return try state.write(fd.rawValue, bytes, count: bytes.count)
            }
        }
    }

    /// A file's fsync that fails (EIO) leaves its content as the disk had it, whatever comes later;
    /// a directory's leaves its entries as they were, durable or not.
    func fsync(_ fd: SystemDescriptor) throws(Errno) {
        let isDirectory = state.withLock { state in state.openFiles[fd.rawValue].map { state.nodes[$0]!.isDirectory } ?? false }
        let fault = fault(at: isDirectory ? .directorySync : .fsync)
        try syscall(counted: true, "fsync", shown(fd)) { state in
            let inode = try state.openInode(fd.rawValue)
            if isDirectory {
                try Self.refuse(fault)
                return state.syncDirectory(inode)
            }
            if fault == .ioError || fault == .noSpace {
                state.loseWriteback(of: inode)
                throw SimErrno(EIO)
            }
            state.syncFile(inode)
        }
    }

    /// Writeback started: nothing to do on a disk whose pages reach it only at an fsync (or by
    /// chance at a power cut, as any page written); only the descriptor is checked.
    func startWriteback(_ fd: SystemDescriptor) throws(Errno) {
        try syscall(counted: false, "sync_file_range", shown(fd)) { state in _ = try state.openInode(fd.rawValue) }
    }

    func status(of fd: SystemDescriptor) throws(Errno) -> FileSystem.Status {
        try syscall(counted: false, "fstat", shown(fd)) { state in state.status(try state.openInode(fd.rawValue)) }
    }

    func status(_ path: UnsafePointer<CChar>, at directory: SystemDescriptor, followLast: Bool) throws(Errno) -> FileSystem.Status {
        let (parts, display) = try resolve(path, at: directory)
        return try syscall(counted: false, followLast ? "stat" : "lstat", display) { state in
            guard let inode = try state.locate(parts, followLast: followLast).inode else { throw SimErrno(ENOENT) }
            return state.status(inode)
        }
    }

    func link(_ existing: UnsafePointer<CChar>, to new: UnsafePointer<CChar>) throws(Errno) {
        let (source, from) = try resolve(existing, at: .workingDirectory)
        let (target, to) = try resolve(new, at: .workingDirectory)
        let fault = fault(at: .allocate)
        try syscall(counted: true, "link", "\(from) to \(to)") { state in
            try Self.refuse(fault)
            try state.link(source, target)
        }
    }

    func rename(_ from: UnsafePointer<CChar>, to: UnsafePointer<CChar>, _ mode: RenameMode) throws(Errno) {
        let (source, fromText) = try resolve(from, at: .workingDirectory)
        let (target, toText) = try resolve(to, at: .workingDirectory)
        guard mode != .exchange else {
            return try syscall(counted: true, "exchange", "\(fromText) with \(toText)") { state in try state.exchange(source, target) }
        }
        let fault = fault(at: .rename)
        try syscall(counted: true, "rename", "\(fromText) to \(toText)") { state in
            try Self.refuse(fault)
            try state.rename(source, to: target, replace: mode == .replace)
        }
    }

    func unlink(_ path: UnsafePointer<CChar>) throws(Errno) {
        let (parts, display) = try resolve(path, at: .workingDirectory)
        let fault = fault(at: .unlink)
        try syscall(counted: true, "unlink", display) { state in
            try Self.refuse(fault)
            try state.unlink(parts)
        }
    }

    /// EEXIST when the name is taken (no fault drawn for it: nothing is allocated).
    func makeDirectory(_ path: UnsafePointer<CChar>, mode: UInt32) throws(Errno) {
        let (parts, display) = try resolve(path, at: .workingDirectory)
        let fault = fault(at: .allocate)
        try syscall(counted: true, "mkdir", display) { state in
            if (try? state.locate(parts, followLast: false).inode) == nil { try Self.refuse(fault) }
            try state.makeDirectory(parts)
        }
    }

    /// The simulated disk keeps no permissions: nothing changes.
    func setPermissions(of fd: SystemDescriptor, to permissions: UInt32) throws(Errno) {
        try syscall(counted: false, "chmod", shown(fd)) { state in _ = try state.openInode(fd.rawValue) }
    }

    func setModificationTime(of fd: SystemDescriptor, to nanos: Int64) throws(Errno) {
        try syscall(counted: true, "utimens", shown(fd)) { state in
            state.setModificationTime(nanos, of: try state.openInode(fd.rawValue))
        }
    }

    /// Not offered: the file layer copies by hand (pread, and its write loop), as on a file
    /// system without copy_file_range.
    func copyRange(from input: SystemDescriptor, at offset: inout Int64, to output: SystemDescriptor, count: Int) throws(Errno) -> Int {
        throw Errno.noSystemCall
    }

    /// The listing is taken whole at opendir, in the order of the names' bytes.
    func openDirectory(_ path: UnsafePointer<CChar>) throws(Errno) -> DirectoryStream {
        let (parts, display) = try resolve(path, at: .workingDirectory)
        return DirectoryStream(rawValue: try syscall(counted: false, "opendir", display) { state in
            let entries = try state.list(parts)
            let stream = state.nextStream
            state.nextStream += 1
            state.directoryStreams[stream] = entries
            return stream
        })
    }

    func nextEntry(_ stream: DirectoryStream) throws(Errno) -> FileSystem.Entry? {
        try syscall(counted: false, "readdir", "stream \(stream.rawValue)") { state in
            guard var entries = state.directoryStreams[stream.rawValue] else { throw SimErrno(EBADF) }
            guard !entries.isEmpty else { return nil }
            let entry = entries.removeFirst()
            state.directoryStreams[stream.rawValue] = entries
            return entry
        }
    }

    func closeDirectory(_ stream: DirectoryStream) {
        state.withLock { _ = $0.directoryStreams.removeValue(forKey: stream.rawValue) }
    }
}
