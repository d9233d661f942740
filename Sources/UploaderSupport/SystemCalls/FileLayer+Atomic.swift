import Foundation

/// The one way a file that readers must never see half-written is written (a temporary file,
/// fsync, rename), and the copy that makes a producer's file our own.
extension FileLayer {
    /// Writes what `contents(fd, display)` writes to `directory/name` atomically: temporary file,
    /// (fsync), rename; the directory fsynced when `syncDirectory`. See `FileSystem.writeAtomically`.
    package func writeAtomically(to name: RelativePath, in directory: String, syncDirectory: Bool, syncFile: Bool = true,
                                 replace: Bool = true, mode: UInt32? = nil, temporaryDirectory: String? = nil,
                                 temporaryPrefix: String = ".upl-tmp-",
                                 contents: (_ fd: Int32, _ display: String) throws -> Void) throws {
        // A random suffix from getrandom(2) (one syscall; Foundation's UUID() opened, read
        // and closed /dev/urandom each time); O_EXCL below still refuses any clash.
        let temp = RelativePath(temporaryPrefix + String(UInt64.random(in: 0...UInt64.max), radix: 16))
        let tempFull = temporaryDirectory == nil ? (name.parent.map { $0.appending(temp) } ?? temp) : temp
        let tempDirectory = temporaryDirectory ?? directory
        let display = name.displayed(in: directory)
        func create() throws -> OpenFile<Calls> {
            let fd = try tempFull.withCString(in: tempDirectory) { cpath in
                try call("create", display) { () throws(Errno) in
                    try calls.open(cpath, at: .workingDirectory, [.writeOnly, .create, .exclusive], mode: mode ?? 0o640)
                }
            }
            return OpenFile(fd, on: calls)
        }
        func createMakingDirectory() throws -> OpenFile<Calls> {
            do {
                return try create()
            } catch let error as SystemError where error.isNotFound && temporaryDirectory != nil {
                // The temporary directory went with its outbox (removed and recreated): make it again.
                try makeDirectories(tempDirectory)
                return try create()
            }
        }
        let fd = try createMakingDirectory()
        var ok = false
        defer {
            if !ok { try? unlink(tempFull, in: tempDirectory) }  // start-up's sweep takes one left behind
        }
        do {
            if let mode { try call("chmod", display) { () throws(Errno) in try calls.setPermissions(of: fd.number, to: mode) } }
            try contents(fd.number.rawValue, display)
            if syncFile { try sync(fd.number, display: display) }
        } catch {
            fd.close()
            throw error
        }
        fd.close()
        try rename(tempFull, in: tempDirectory, to: name, in: directory, replace: replace)
        ok = true
        if syncDirectory { try self.syncDirectory(of: name, in: directory) }
    }

    /// Creates `name` (never over an existing one), copies into it every byte of the open file
    /// `fd` (`status` its fstat), gives it that file's permission bits and mtime, and fsyncs it.
    /// The kernel copies (`copy_file_range`); where it cannot, a 1 MiB buffer does. A failure
    /// removes the half-made copy.
    package func copyFile(from fd: Int32, status: FileSystem.Status, to name: RelativePath, in directory: String) throws {
        let display = name.displayed(in: directory)
        let out = try open(name, in: directory, [.writeOnly, .create, .exclusive, .noFollow], mode: 0o600, operation: "create")
        do {
            try copyBytes(from: SystemDescriptor(rawValue: fd), size: status.size, to: out.number, display: display)
            try call("chmod", display) { () throws(Errno) in try calls.setPermissions(of: out.number, to: status.permissions & 0o666) }
            try call("utimens", display) { () throws(Errno) in try calls.setModificationTime(of: out.number, to: status.mtimeNanos) }
            try sync(out.number, display: display)
            out.close()
        } catch {
            out.close()
            try? unlink(name, in: directory)  // the half-made copy; start-up's sweep takes one left behind
            throw error
        }
    }

    /// `size` bytes from the start of `input` to the end of `output`.
    private func copyBytes(from input: SystemDescriptor, size: Int64, to output: SystemDescriptor, display: String) throws {
        var offset: Int64 = 0
        while offset < size {
            let left = Int(min(size - offset, 1 << 30))
            do {
                let n = try calls.copyRange(from: input, at: &offset, to: output, count: left)
                if n == 0 { break }  // shorter than it was: the caller's check sees the change
            } catch {
                switch error {
                case .crossDevice, .invalid, .noSystemCall, .notSupported:
                    return try copyByBuffer(from: input, at: offset, to: output, display: display)
                default:
                    throw SystemError("copy_file_range", path: display, code: error)
                }
            }
        }
    }

    private func copyByBuffer(from input: SystemDescriptor, at start: Int64, to output: SystemDescriptor, display: String) throws {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset = start
        while true {
            let n = try buffer.withUnsafeMutableBytes { raw in
                try call("read", display) { () throws(Errno) in try calls.read(input, into: raw, at: offset) }
            }
            if n == 0 { return }
            try buffer.withUnsafeBytes { try writeAll(UnsafeRawBufferPointer(rebasing: $0[0..<n]), to: output, path: display) }
            offset += Int64(n)
        }
    }
}
