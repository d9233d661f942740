@preconcurrency import Glibc

/// An open kernel file descriptor that closes exactly once: by `close()`, or when it goes out of
/// scope on any other path (a throw included).
///
/// A `~Copyable` struct rather than a class: no allocation per open, and the compiler refuses a
/// use after `close()` or a second owner. `rawValue` lends the number to a libc call; `release()`
/// hands it to an owner that closes it itself (the spool's `SpoolFileSystem` seam, whose
/// descriptors a simulated disk hands out as well, still passes raw numbers).
package struct FileDescriptor: ~Copyable {
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
