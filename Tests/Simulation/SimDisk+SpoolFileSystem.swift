@preconcurrency import Glibc
import UploaderSupport

/// The spool's file-system calls on the simulated disk, each as the real one in
/// `FileSystem.swift` makes it: the same lookups, the same errors.
extension SimDisk {
    /// Components of `directory/path`, and the index from which `FileSystem.openParent` walks
    /// with O_NOFOLLOW (the components of `path`).
    private static func split(_ path: RelativePath, in directory: String) -> (parts: [[UInt8]], strictFrom: Int) {
        let parts = SimDiskState.components(directory, path)
        return (parts, parts.count - path.components.count)
    }

    func status(_ path: RelativePath, in directory: String) throws -> FileSystem.Status {
        let (parts, strictFrom) = Self.split(path, in: directory)
        return try reading("lstat", path.displayed(in: directory)) { state in
            guard let inode = try state.locate(parts, followLast: false, strictFrom: strictFrom).inode else { throw SimErrno(ENOENT) }
            return state.status(inode)
        }
    }

    func status(fd: Int32, path: String) throws -> FileSystem.Status {
        try reading("fstat", path) { state in state.status(try state.openInode(fd)) }
    }

    func exists(_ path: RelativePath, in directory: String) -> Bool {
        let parts = SimDiskState.components(directory, path)
        return (try? reading("lstat", "") { state in try state.locate(parts, followLast: false).inode != nil }) ?? false
    }

    func openForReading(_ path: RelativePath, in directory: String) throws -> Int32 {
        let (parts, strictFrom) = Self.split(path, in: directory)
        return try reading("open", path.displayed(in: directory)) { state in
            try state.openForReading(parts, strictFrom: strictFrom)
        }
    }

    func close(_ fd: Int32) {
        state.withLock { _ = $0.openFiles.removeValue(forKey: fd) }
    }

    func read(fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String?) throws -> Int {
        let fault = fault(at: .read)
        return try reading("read", path ?? "fd \(fd)") { state in
            try Self.refuse(fault)
            return try state.read(fd, into: buffer, at: offset)
        }
    }

    func readAll(_ path: RelativePath, in directory: String) throws -> [UInt8] {
        let display = path.displayed(in: directory)
        let fd = try openForReading(path, in: directory)
        defer { close(fd) }
        return try reading("read", display) { state in
            let inode = try state.openInode(fd)
            guard state.nodes[inode]!.kind == .regular else { throw SimErrno(EINVAL) }
            return state.nodes[inode]!.content.data
        }
    }

    func rename(_ from: RelativePath, in fromDir: String, to: RelativePath, in toDir: String, replace: Bool) throws {
        let source = SimDiskState.components(fromDir, from)
        let target = SimDiskState.components(toDir, to)
        let fault = fault(at: .rename)
        try operation("rename", "\(from.displayed(in: fromDir)) to \(to.displayed(in: toDir))") { state in
            try Self.refuse(fault)
            try state.rename(source, to: target, replace: replace)
        }
    }

    func link(_ existing: RelativePath, in fromDir: String, to new: RelativePath, in toDir: String) throws {
        let source = SimDiskState.components(fromDir, existing)
        let target = SimDiskState.components(toDir, new)
        let fault = fault(at: .allocate)
        try operation("link", "\(existing.displayed(in: fromDir)) to \(new.displayed(in: toDir))") { state in
            try Self.refuse(fault)
            try state.link(source, target)
        }
    }

    func unlink(_ path: RelativePath, in directory: String) throws {
        let parts = SimDiskState.components(directory, path)
        let fault = fault(at: .unlink)
        try operation("unlink", path.displayed(in: directory)) { state in
            try Self.refuse(fault)
            try state.unlink(parts)
        }
    }

    func syncDirectory(of name: RelativePath, in directory: String) throws {
        let parent = name.parent ?? RelativePath(bytes: [])
        let parts = SimDiskState.components(directory, parent)
        let fault = fault(at: .directorySync)
        try operation("fsync", parent.displayed(in: directory)) { state in
            let node = try state.directory(at: parts)
            // A directory's fsync that fails leaves its entries as they were: durable or not.
            try Self.refuse(fault)
            state.syncDirectory(node)
        }
    }

    /// `mkdir -p`: each missing directory is one mkdir (one operation); an existing non-directory fails with ENOTDIR.
    func makeDirectories(_ path: String) throws {
        let parts = SimDiskState.components(absolute: Array(path.utf8))
        for end in parts.indices {
            let prefix = Array(parts[...end])
            let display = "/" + prefix.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "/")
            let found = try reading("stat", display) { state -> UInt64? in
                do {
                    return try state.locate(prefix, followLast: true).inode
                } catch let error as SimErrno where error.code == ENOENT {
                    return nil
                }
            }
            if let found {
                let isDirectory = state.withLock { $0.nodes[found]!.isDirectory }
                if isDirectory { continue }
                throw SystemError("mkdir", path: display, code: .notDirectory)
            }
            try makeDirectory(prefix, display: display)
        }
    }

    func makeParents(of path: RelativePath, in directory: String) throws {
        var current = RelativePath(bytes: [])
        for part in path.components.dropLast() {
            current = current.appending(RelativePath(bytes: part))
            try makeDirectory(SimDiskState.components(directory, current), display: current.displayed(in: directory))
        }
    }

    /// One mkdir(2), mode 0750; EEXIST is success, as both callers treat it.
    private func makeDirectory(_ parts: [[UInt8]], display: String) throws {
        do {
            let fault = fault(at: .allocate)
            try operation("mkdir", display) { state in
                if (try? state.locate(parts, followLast: false).inode) == nil { try Self.refuse(fault) }
                try state.makeDirectory(parts)
            }
        } catch let error as SystemError where error.code == .exists {
            return
        }
    }

    func list(_ path: RelativePath, in directory: String) throws -> [FileSystem.Entry] {
        let parts = SimDiskState.components(directory, path)
        return try reading("opendir", path.displayed(in: directory)) { state in try state.list(parts) }
    }

    /// No lock: the simulator runs `uploader retry` only between jobs (see `ProcessView.withLock`).
    /// Processes on one simulated disk wait for each other's locks in `SimFileLocks`; here a lock
    /// is only heard (`observeLocks`).
    func withLock<T>(_ name: RelativePath, in directory: String, exclusive: Bool, _ body: () throws -> T) throws -> T {
        state.withLock { $0.lockObserver }?(name.displayed(in: directory))
        return try body()
    }
}
