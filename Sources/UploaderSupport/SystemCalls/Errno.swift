@preconcurrency import Glibc

/// An errno value by name (`.noEntry`, not `ENOENT`): what a failed system call said, compared
/// by what it means rather than by number, with the C library's text as its description.
package struct Errno: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: Int32

    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's `errno` as it is now (read it right after the failed call).
    package static var current: Errno {
        get { Errno(rawValue: errno) }
        set { errno = newValue.rawValue }
    }

    /// `strerror`: "No such file or directory".
    package var description: String { String(cString: strerror(rawValue)) }

    /// ENOENT: nothing has that name.
    package static let noEntry = Errno(rawValue: ENOENT)
    /// EEXIST: the name is taken.
    package static let exists = Errno(rawValue: EEXIST)
    /// EINTR: a signal came first; the call is retried.
    package static let interrupted = Errno(rawValue: EINTR)
    /// ENOTDIR: a component on the way is not a directory.
    package static let notDirectory = Errno(rawValue: ENOTDIR)
    /// EACCES: the permission bits refuse it.
    package static let permissionDenied = Errno(rawValue: EACCES)
    /// EPERM: not allowed to this process (a protected hard link, a setgid bit).
    package static let notPermitted = Errno(rawValue: EPERM)
    /// EIO: the device failed.
    package static let io = Errno(rawValue: EIO)
    /// ENOSPC: the disk (or the quota) is full.
    package static let noSpace = Errno(rawValue: ENOSPC)
    /// EROFS: a read-only file system.
    package static let readOnlyFileSystem = Errno(rawValue: EROFS)
    /// EXDEV: the two names are on different file systems.
    package static let crossDevice = Errno(rawValue: EXDEV)
    /// ELOOP: a symlink where O_NOFOLLOW said none may be.
    package static let loop = Errno(rawValue: ELOOP)
    /// ENAMETOOLONG: a name or path longer than the system takes.
    package static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    /// ENXIO: a socket or device with nothing behind it.
    package static let noDevice = Errno(rawValue: ENXIO)
    /// EAGAIN / EWOULDBLOCK (the same number on Linux): it would have to wait.
    package static let wouldBlock = Errno(rawValue: EWOULDBLOCK)
    /// EINVAL: an argument the call does not take.
    package static let invalid = Errno(rawValue: EINVAL)
    /// ENOSYS: the kernel has no such call.
    package static let noSystemCall = Errno(rawValue: ENOSYS)
    /// EOPNOTSUPP: the file system does not do that.
    package static let notSupported = Errno(rawValue: EOPNOTSUPP)
    /// ENOBUFS: a socket's buffer overflowed (rtnetlink dropped messages).
    package static let noBufferSpace = Errno(rawValue: ENOBUFS)
    /// EINPROGRESS: a non-blocking connect has begun.
    package static let inProgress = Errno(rawValue: EINPROGRESS)
}
