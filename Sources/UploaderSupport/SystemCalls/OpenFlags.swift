@preconcurrency import Glibc

/// The flags of an open(2), by name. Close-on-exec is always added: no descriptor of the file
/// layer leaks into a hook or a child process.
package struct OpenFlags: OptionSet, Hashable, Sendable {
    package let rawValue: Int32
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// O_RDONLY (no bit: the absence of the write flags).
    package static let readOnly: OpenFlags = []
    package static let writeOnly = OpenFlags(rawValue: O_WRONLY)
    package static let readWrite = OpenFlags(rawValue: O_RDWR)
    /// O_CREAT: made (with the call's mode, less the umask) when missing.
    package static let create = OpenFlags(rawValue: O_CREAT)
    /// O_EXCL with `.create`: EEXIST rather than open an existing name.
    package static let exclusive = OpenFlags(rawValue: O_EXCL)
    /// O_NOFOLLOW: ELOOP rather than follow a symlink at the last component.
    package static let noFollow = OpenFlags(rawValue: O_NOFOLLOW)
    /// O_NONBLOCK: a FIFO with no writer does not hang the open or the reads.
    package static let nonBlocking = OpenFlags(rawValue: O_NONBLOCK)
    /// O_DIRECTORY: ENOTDIR unless it is a directory.
    package static let directory = OpenFlags(rawValue: O_DIRECTORY)
    /// O_APPEND: every write lands at the end.
    package static let append = OpenFlags(rawValue: O_APPEND)
    /// O_TRUNC: an existing file is emptied.
    package static let truncate = OpenFlags(rawValue: O_TRUNC)

    /// Whether the open may write (O_WRONLY or O_RDWR).
    package var writes: Bool { rawValue & O_ACCMODE != O_RDONLY }
}
