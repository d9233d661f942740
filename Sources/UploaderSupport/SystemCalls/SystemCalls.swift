/// The system calls the file layer (`FileLayer`) makes, typed: descriptors as `SystemDescriptor`,
/// flags as `OpenFlags` and `RenameMode`, failures as `Errno`. Production makes them on the kernel
/// (`KernelCalls`); the simulator makes them on its model of a disk, so that the file layer's own
/// code — its write loops, its flags, which directory it fsyncs — runs in every schedule.
///
/// Paths are NUL-terminated bytes (not necessarily UTF-8) relative to a directory descriptor, or
/// to the working directory (`SystemDescriptor.workingDirectory`) when absolute or plain. EINTR
/// never comes out of a call: each retries it itself.
package protocol SystemCalls: Sendable {
    /// openat(2); `mode` is used with `.create`.
    func open(_ path: UnsafePointer<CChar>, at directory: SystemDescriptor, _ flags: OpenFlags, mode: UInt32) throws(Errno) -> SystemDescriptor
    /// flock(2), exclusive, without waiting: false when another open file holds the lock. It
    /// lasts until the descriptor is closed.
    func tryLock(_ fd: SystemDescriptor) throws(Errno) -> Bool
    /// ftruncate(2).
    func truncate(_ fd: SystemDescriptor, to size: Int64) throws(Errno)
    /// close(2); what it says is not acted on (the descriptor is gone either way).
    func close(_ fd: SystemDescriptor)
    /// read(2) from the descriptor's offset; 0 at the end.
    func read(_ fd: SystemDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int
    /// pread(2); 0 at the end.
    func read(_ fd: SystemDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(Errno) -> Int
    /// write(2): may take fewer bytes than given (a short write); the caller writes the rest.
    func write(_ fd: SystemDescriptor, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int
    /// fsync(2), of a file or a directory.
    func fsync(_ fd: SystemDescriptor) throws(Errno)
    /// sync_file_range(2) with SYNC_FILE_RANGE_WRITE over the whole file: writeback of its dirty
    /// pages starts, and the call returns without waiting. Makes nothing durable (an fsync must
    /// follow): started for several files before their fsyncs, one journal commit carries them all.
    func startWriteback(_ fd: SystemDescriptor) throws(Errno)
    /// fstat(2).
    func status(of fd: SystemDescriptor) throws(Errno) -> FileSystem.Status
    /// fstatat(2): with `followLast` false a symlink at the last component is itself described (lstat).
    func status(_ path: UnsafePointer<CChar>, at directory: SystemDescriptor, followLast: Bool) throws(Errno) -> FileSystem.Status
    /// linkat(2) without AT_SYMLINK_FOLLOW: a symlink is linked, not its target.
    func link(_ existing: UnsafePointer<CChar>, to new: UnsafePointer<CChar>) throws(Errno)
    /// renameat2(2).
    func rename(_ from: UnsafePointer<CChar>, to: UnsafePointer<CChar>, _ mode: RenameMode) throws(Errno)
    /// unlinkat(2) of a non-directory.
    func unlink(_ path: UnsafePointer<CChar>) throws(Errno)
    /// mkdirat(2).
    func makeDirectory(_ path: UnsafePointer<CChar>, mode: UInt32) throws(Errno)
    /// fchmod(2).
    func setPermissions(of fd: SystemDescriptor, to permissions: UInt32) throws(Errno)
    /// futimens(2): access and modification time both set to `nanos` since the epoch.
    func setModificationTime(of fd: SystemDescriptor, to nanos: Int64) throws(Errno)
    /// copy_file_range(2) from `input` at `offset` (moved on) to `output`'s offset; 0 at the
    /// input's end; ENOSYS, EXDEV, EINVAL or EOPNOTSUPP where the caller must copy by hand.
    func copyRange(from input: SystemDescriptor, at offset: inout Int64, to output: SystemDescriptor, count: Int) throws(Errno) -> Int
    /// opendir(3) on `path`: a stream of its entries for `nextEntry`, ended by `closeDirectory`.
    func openDirectory(_ path: UnsafePointer<CChar>) throws(Errno) -> DirectoryStream
    /// readdir(3): the next entry (`.` and `..` included), nil at the end.
    func nextEntry(_ stream: DirectoryStream) throws(Errno) -> FileSystem.Entry?
    /// closedir(3).
    func closeDirectory(_ stream: DirectoryStream)
}

/// An open file's number as the system calls hand it out and take it: a kernel descriptor, or
/// the simulated disk's. Typed so that no count or errno is taken for one.
package struct SystemDescriptor: RawRepresentable, Hashable, Sendable {
    package let rawValue: Int32
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// AT_FDCWD: a path relative to the working directory (or absolute).
    package static let workingDirectory = SystemDescriptor(rawValue: -100)
    /// Descriptor 2, where log lines go.
    package static let standardError = SystemDescriptor(rawValue: 2)
}

/// An open directory listing (`SystemCalls.openDirectory`): a `DIR *` on the kernel, a number on
/// the simulated disk.
package struct DirectoryStream: RawRepresentable, Hashable, Sendable {
    package let rawValue: UInt
    package init(rawValue: UInt) { self.rawValue = rawValue }
}

/// What renameat2 does when the target name exists.
package enum RenameMode: Sendable {
    /// rename(2): the target is replaced.
    case replace
    /// RENAME_NOREPLACE: EEXIST instead.
    case noReplace
    /// RENAME_EXCHANGE: the two names swap their files in one step (both must exist).
    case exchange
}

/// An open descriptor that closes exactly once through the calls that opened it: on `close()`
/// or when it goes out of scope on any other path (a throw included).
package struct OpenFile<Calls: SystemCalls>: ~Copyable {
    package let number: SystemDescriptor
    private let calls: Calls

    package init(_ number: SystemDescriptor, on calls: Calls) {
        self.number = number
        self.calls = calls
    }

    /// Closes now (the end of the value closes it).
    package consuming func close() {}

    deinit { calls.close(number) }
}
