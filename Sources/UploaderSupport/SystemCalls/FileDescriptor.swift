@preconcurrency import Glibc

/// An open kernel file descriptor that closes exactly once: by `close()`, or when it goes out of
/// scope on any other path (a throw included).
///
/// A `~Copyable` struct rather than a class: no allocation per open, and the compiler refuses a
/// use after `close()` or a second owner. `rawValue` lends the number to a libc call; `release()`
/// hands it to an owner that closes it itself (the spool's `SpoolFileSystem` seam, whose
/// descriptors a simulated disk hands out as well, still passes raw numbers).
/// `Sendable` because it cannot be copied: a holder that shares it (`SpoolLock`) only lends the
/// number, and only its one owner can close it.
package struct FileDescriptor: ~Copyable, Sendable {
    package let rawValue: Int32

    /// Takes ownership of `rawValue`, an open descriptor nobody else closes.
    package init(adopting rawValue: Int32) { self.rawValue = rawValue }

    /// open(2), retried on EINTR; `display` names the path in the error.
    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0, display: String? = nil,
                             operation: String = "open") throws -> FileDescriptor {
        let fd = try retryingEINTR(operation, path: display ?? path) { Glibc.open(path, flags, mode) }
        return FileDescriptor(adopting: fd)
    }

    /// open(2) of `path` inside `directory` (its bytes need not be UTF-8), retried on EINTR;
    /// `operation` names the call in the error ("create" for an O_CREAT).
    package static func open(_ path: RelativePath, in directory: String, _ flags: Int32, mode: mode_t = 0,
                             operation: String = "open") throws -> FileDescriptor {
        let fd = try path.withCString(in: directory) { cpath in
            try retryingEINTR(operation, path: path.displayed(in: directory)) { Glibc.open(cpath, flags, mode) }
        }
        return FileDescriptor(adopting: fd)
    }

    /// openat(2) of the single name `name` relative to this directory, retried on EINTR.
    package func open(at name: RelativePath, _ flags: Int32, mode: mode_t = 0, display: String) throws -> FileDescriptor {
        let directory = rawValue
        let fd = try name.withCString(in: "") { cname in
            try retryingEINTR("open", path: display) { openat(directory, cname, flags, mode) }
        }
        return FileDescriptor(adopting: fd)
    }

    /// How a file is opened (`O_RDONLY`, `O_WRONLY`, `O_RDWR`).
    package enum Access: Sendable {
        case readOnly, writeOnly, readWrite

        var flags: Int32 {
            switch self {
            case .readOnly: O_RDONLY
            case .writeOnly: O_WRONLY
            case .readWrite: O_RDWR
            }
        }
    }

    /// What else an open does, beyond its access.
    package struct Options: OptionSet, Sendable {
        package let rawValue: Int32
        package init(rawValue: Int32) { self.rawValue = rawValue }

        /// O_NONBLOCK: a FIFO with no writer does not hang the open or the reads.
        package static let nonBlocking = Options(rawValue: O_NONBLOCK)
        /// O_NOCTTY: a terminal opened by mistake does not become ours.
        package static let noControllingTerminal = Options(rawValue: O_NOCTTY)
    }

    /// open(2) of `path` with close-on-exec, `create` (O_CREAT) making it with `permissions` (less
    /// the umask) when missing: for callers outside this layer, which name no libc flag.
    package static func open(_ path: String, _ access: Access, options: Options = [], create permissions: UInt32? = nil) throws -> FileDescriptor {
        let flags = access.flags | options.rawValue | O_CLOEXEC | (permissions == nil ? 0 : O_CREAT)
        return try open(path, flags, mode: mode_t(permissions ?? 0))
    }

    /// read(2) into `buffer` from the current offset, retried on EINTR; 0 at the end.
    package func read(into buffer: UnsafeMutableRawBufferPointer, path: String) throws -> Int {
        try retryingEINTR("read", path: path) { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// read(2) of what is there, up to `buffer.count` bytes, EINTR retried; 0 at the end,
    /// `.wouldBlock` from a non-blocking descriptor with nothing to read.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try Self.countRetryingEINTR { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// write(2) of what fits, EINTR retried: may take fewer bytes than given; `.wouldBlock` when
    /// a non-blocking descriptor takes none.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try Self.countRetryingEINTR { Glibc.write(rawValue, bytes.baseAddress, bytes.count) }
    }

    /// The byte count `call` (a read or a write) returns, the call made again on EINTR.
    private static func countRetryingEINTR(_ call: () -> Int) throws(Errno) -> Int {
        while true {
            let count = call()
            if count >= 0 { return count }
            let code = Errno.current
            if code != .interrupted { throw code }
        }
    }

    /// flock(2) without waiting: true when taken, false when another open file holds it
    /// (EWOULDBLOCK); any other failure is thrown as `flock PATH: …`.
    package func tryLock(exclusive: Bool, path: String) throws -> Bool {
        if flock(rawValue, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0 { return true }
        let code = Errno.current
        if code == .wouldBlock { return false }
        throw SystemError("flock", path: path, code: code)
    }

    /// Lets go of the flock(2) lock this open file holds (closing does as well).
    package func unlock() { _ = flock(rawValue, LOCK_UN) }

    /// pread(2): up to `count` bytes at `offset` (fewer at the end), retried on EINTR.
    package func read(upTo count: Int, at offset: Int64, path: String) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let n = try buffer.withUnsafeMutableBytes { raw in
            try retryingEINTR("read", path: path) { pread(rawValue, raw.baseAddress, raw.count, off_t(offset)) }
        }
        return Array(buffer[0..<n])
    }

    /// ftruncate(2) to `size`, then pwrite(2) of `bytes` at the start: a small file rewritten in place.
    package func replaceContent(with bytes: [UInt8], path: String) throws {
        try retryingEINTR("truncate", path: path) { ftruncate(rawValue, 0) }
        let written = try bytes.withUnsafeBytes { raw in
            try retryingEINTR("write", path: path) { pwrite(rawValue, raw.baseAddress, raw.count, 0) }
        }
        if written != bytes.count { throw SystemError("write", path: path, code: .io) }
    }

    /// fsync(2), retried on EINTR.
    package func sync(display: String) throws {
        try retryingEINTR("fsync", path: display) { fsync(rawValue) }
    }

    /// Closes now. What close(2) says is not acted on: the descriptor is gone either way
    /// (Linux releases it even on EINTR), and every write that must be durable was fsynced first.
    package consuming func close() {
        let fd = rawValue
        discard self
        _ = Glibc.close(fd)
    }

    /// Gives up ownership: the caller closes the number it gets back.
    package consuming func release() -> Int32 {
        let fd = rawValue
        discard self
        return fd
    }

    deinit { _ = Glibc.close(rawValue) }
}
