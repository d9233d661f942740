import Foundation

/// Writing: the write loop every write goes through, files created whole, appends, and the
/// directory fsyncs that make names durable.
extension FileLayer {
    /// write(2) until every byte of `bytes` went out: a write may take fewer than it was given.
    package func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: SystemDescriptor, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            let n = try call("write", path) { () throws(Errno) in try calls.write(fd, rest) }
            // The planted bug: a short write taken for the whole.
            if PlantedBug.shortWriteTakenWhole.isActive { return }
            offset += n
        }
    }

    /// Creates `name` exclusively (O_EXCL), writes `data`, fsyncs it when `sync`; removes it again on failure.
    package func createFile(_ data: [UInt8], named name: RelativePath, in directory: String, sync: Bool) throws {
        let display = name.displayed(in: directory)
        let fd = try open(name, in: directory, [.writeOnly, .create, .exclusive], mode: 0o640, operation: "create")
        do {
            try data.withUnsafeBytes { try writeAll($0, to: fd.number, path: display) }
            // The planted bug: the file's fsync skipped, its rename into place made all the same.
            if sync && !PlantedBug.fileSyncSkipped.isActive { try self.sync(fd.number, display: display) }
            fd.close()
        } catch {
            fd.close()
            throw SystemError.afterRemoving(name, failed: error, operation: "create", path: display) { try unlink(name, in: directory) }
        }
    }

    /// Appends `data` to `directory/name` (created, mode 0640, when missing) under O_APPEND, and
    /// no fsync: what needs an append is a statistic, not a record. Never follows a symlink at `name`.
    package func append(_ data: [UInt8], to name: RelativePath, in directory: String) throws {
        let fd = try open(name, in: directory, [.writeOnly, .append, .create, .noFollow], mode: 0o640)
        try data.withUnsafeBytes { try writeAll($0, to: fd.number, path: name.displayed(in: directory)) }
    }

    /// fsync(2) of an open file or directory.
    package func sync(_ fd: SystemDescriptor, display: String) throws {
        try call("fsync", display) { () throws(Errno) in try calls.fsync(fd) }
    }

    /// fsync of a directory, making the renames and creations in it durable.
    package func syncDirectoryAt(_ path: String) throws {
        let directory = try open(path: path, [.readOnly, .directory])
        try sync(directory.number, display: path)
    }

    /// fsync of the directory that holds `name` inside `directory`.
    package func syncDirectory(of name: RelativePath, in directory: String) throws {
        guard let parent = name.parent else { return try syncDirectoryAt(directory) }
        let fd = try open(parent, in: directory, [.readOnly, .directory])
        try sync(fd.number, display: parent.displayed(in: directory))
    }

    /// `mkdir -p`, mode 0750 for what it creates.
    package func makeDirectories(_ path: String) throws { try makeDirectories(path, mode: 0o750) }

    /// `mkdir -p` with the given mode for what it creates.
    package func makeDirectories(_ path: String, mode: UInt32) throws {
        // Anything that cannot be looked at is made below, parents first (the mkdir says why not).
        if let found = try? calls.status(path, at: .workingDirectory, followLast: true) {
            if found.kind == .directory { return }
            throw SystemError("mkdir", path: path, code: .notDirectory)
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty && parent != path { try makeDirectories(parent, mode: mode) }
        do {
            try calls.makeDirectory(path, mode: mode)
        } catch {
            if error != .exists { throw SystemError("mkdir", path: path, code: error) }
        }
    }

    /// Creates the parent directories of `path` inside `directory` (recursive spools), mode 0750.
    package func makeParents(of path: RelativePath, in directory: String) throws {
        var current = RelativePath(bytes: [])
        for part in path.components.dropLast() {
            current = current.appending(RelativePath(bytes: part))
            let made = current
            try made.withCString(in: directory) { cpath in
                do {
                    try calls.makeDirectory(cpath, mode: 0o750)
                } catch let error as Errno {
                    if error != .exists { throw SystemError("mkdir", path: made.displayed(in: directory), code: error) }
                }
            }
        }
    }

    /// Lists `path` inside `directory` (the directory itself when `path` is empty), without `.` and `..`.
    package func list(_ path: RelativePath, in directory: String) throws -> [FileSystem.Entry] {
        var entries: [FileSystem.Entry] = []
        try forEachEntry(path, in: directory) { entries.append($0) }
        return entries
    }

    /// Calls `body` with each entry of `path` inside `directory` as readdir returns it, holding
    /// none of them: a directory of a million names costs one entry of memory, not a million.
    /// Entries removed meanwhile (by `body` too) may or may not be seen; none is seen twice.
    package func forEachEntry(_ path: RelativePath, in directory: String, _ body: (FileSystem.Entry) throws -> Void) throws {
        let display = path.displayed(in: directory)
        let stream = try path.withCString(in: directory) { cpath in
            try call("opendir", display) { () throws(Errno) in try calls.openDirectory(cpath) }
        }
        defer { calls.closeDirectory(stream) }
        let dropsLast = PlantedBug.listingDropsLast.isActive
        var held: FileSystem.Entry?
        while let entry = try call("readdir", display, { () throws(Errno) in try calls.nextEntry(stream) }) {
            if entry.name.bytes == [0x2E] || entry.name.bytes == [0x2E, 0x2E] { continue }
            guard dropsLast else {
                try body(entry)
                continue
            }
            if let previous = held { try body(previous) }
            held = entry
        }
    }
}
