import UploaderSupport

/// The spool's file-system calls on the simulated disk: production's file layer (`FileLayer`)
/// on the disk's system calls (`SimDisk+SystemCalls.swift`), so the same lookups, flags, write
/// loops and fsyncs run here as on the kernel. Only the permission checks (`SimDisk+Adoption`)
/// and the lock are the simulator's own.
extension SimDisk: SpoolFileSystem {
    /// Production's file layer on this disk.
    var layer: FileLayer<SimDisk> { FileLayer(calls: self) }

    func status(_ path: RelativePath, in directory: String) throws -> FileSystem.Status { try layer.status(path, in: directory) }
    func status(fd: Int32, path: String) throws -> FileSystem.Status { try layer.status(fd: fd, path: path) }
    func statuses<Kept: Sendable>(_ paths: [RelativePath], in directory: String,
                                  keeping keep: @escaping @Sendable (FileSystem.Status?) -> Kept) -> [Kept] {
        layer.statuses(paths, in: directory, keeping: keep)
    }
    func exists(_ path: RelativePath, in directory: String) -> Bool { layer.exists(path, in: directory) }
    func openForReading(_ path: RelativePath, in directory: String) throws -> Int32 { try layer.openForReading(path, in: directory) }
    func close(_ fd: Int32) { layer.close(fd) }

    func read(fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String?) throws -> Int {
        try layer.read(fd: fd, into: buffer, at: offset, path: path)
    }

    func readAll(_ path: RelativePath, in directory: String) throws -> [UInt8] { try layer.readAll(path, in: directory) }

    func createFile(_ data: [UInt8], named name: RelativePath, in directory: String, sync: Bool) throws {
        try layer.createFile(data, named: name, in: directory, sync: sync)
    }

    func createFiles(_ files: [NewFile]) -> [Result<Void, any Error>] { layer.createFiles(files) }

    func rename(_ from: RelativePath, in fromDir: String, to: RelativePath, in toDir: String, replace: Bool) throws {
        try layer.rename(from, in: fromDir, to: to, in: toDir, replace: replace)
    }

    func link(_ existing: RelativePath, in fromDir: String, to new: RelativePath, in toDir: String) throws {
        try layer.link(existing, in: fromDir, to: new, in: toDir)
    }

    func unlink(_ path: RelativePath, in directory: String) throws { try layer.unlink(path, in: directory) }

    func copyFile(from fd: Int32, status: FileSystem.Status, to name: RelativePath, in directory: String) throws {
        try layer.copyFile(from: fd, status: status, to: name, in: directory)
    }

    func exchange(_ a: RelativePath, in aDir: String, with b: RelativePath, in bDir: String) throws {
        try layer.exchange(a, in: aDir, with: b, in: bDir)
    }

    func syncDirectory(of name: RelativePath, in directory: String) throws { try layer.syncDirectory(of: name, in: directory) }
    func makeDirectories(_ path: String) throws { try layer.makeDirectories(path) }
    func makeParents(of path: RelativePath, in directory: String) throws { try layer.makeParents(of: path, in: directory) }
    func list(_ path: RelativePath, in directory: String) throws -> [FileSystem.Entry] { try layer.list(path, in: directory) }

    func forEachEntry(_ path: RelativePath, in directory: String, _ body: (FileSystem.Entry) throws -> Void) throws {
        try layer.forEachEntry(path, in: directory, body)
    }

    func append(_ data: [UInt8], to name: RelativePath, in directory: String) throws { try layer.append(data, to: name, in: directory) }

    func takeProcessLock(_ name: RelativePath, in directory: String, stamp: [UInt8]) throws -> ProcessLockTaking {
        try layer.takeLockFile(name, in: directory, stamp: stamp)
    }

    /// No lock: the simulator runs `uploader retry` only between jobs (see `ProcessView.withLock`).
    /// Processes on one simulated disk wait for each other's locks in `SimFileLocks`; here a lock
    /// is only heard (`observeLocks`).
    func withLock<T>(_ name: RelativePath, in directory: String, exclusive: Bool, _ body: () throws -> T) throws -> T {
        state.withLock { $0.lockObserver }?(name.displayed(in: directory))
        return try body()
    }
}
