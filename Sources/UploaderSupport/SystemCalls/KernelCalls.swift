@preconcurrency import Glibc
import CSysShims

/// The system calls on the kernel (Glibc), each retried on EINTR: what the daemon and the CLI run.
package struct KernelCalls: SystemCalls {
    package init() {}

    /// The call's result, retried while it fails with EINTR; any other failure thrown as its errno.
    @inline(__always) @discardableResult
    private func retrying<T: BinaryInteger>(_ call: () -> T) throws(Errno) -> T {
        while true {
            let result = call()
            if result >= 0 { return result }
            let code = Errno.current
            if code != .interrupted { throw code }
        }
    }

    package func open(_ path: UnsafePointer<CChar>, at directory: SystemDescriptor, _ flags: OpenFlags,
                      mode: UInt32) throws(Errno) -> SystemDescriptor {
        let flags = flags.rawValue | O_CLOEXEC
        return SystemDescriptor(rawValue: try retrying { openat(directory.rawValue, path, flags, mode_t(mode)) })
    }

    package func close(_ fd: SystemDescriptor) { _ = Glibc.close(fd.rawValue) }

    package func tryLock(_ fd: SystemDescriptor) throws(Errno) -> Bool {
        while true {
            if flock(fd.rawValue, LOCK_EX | LOCK_NB) == 0 { return true }
            let code = Errno.current
            if code == .wouldBlock { return false }
            if code != .interrupted { throw code }
        }
    }

    package func truncate(_ fd: SystemDescriptor, to size: Int64) throws(Errno) {
        try retrying { ftruncate(fd.rawValue, off_t(size)) }
    }

    package func read(_ fd: SystemDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retrying { Glibc.read(fd.rawValue, buffer.baseAddress, buffer.count) }
    }

    package func read(_ fd: SystemDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(Errno) -> Int {
        try retrying { pread(fd.rawValue, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    package func write(_ fd: SystemDescriptor, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try retrying { Glibc.write(fd.rawValue, bytes.baseAddress, bytes.count) }
    }

    package func fsync(_ fd: SystemDescriptor) throws(Errno) {
        try retrying { Glibc.fsync(fd.rawValue) }
    }

    package func startWriteback(_ fd: SystemDescriptor) throws(Errno) {
        try retrying { uploader_start_writeback(fd.rawValue) }
    }

    package func status(of fd: SystemDescriptor) throws(Errno) -> FileSystem.Status {
        var st = stat()
        try retrying { fstat(fd.rawValue, &st) }
        return FileSystem.Status(st)
    }

    package func status(_ path: UnsafePointer<CChar>, at directory: SystemDescriptor, followLast: Bool) throws(Errno) -> FileSystem.Status {
        var st = stat()
        try retrying { fstatat(directory.rawValue, path, &st, followLast ? 0 : AT_SYMLINK_NOFOLLOW) }
        return FileSystem.Status(st)
    }

    package func link(_ existing: UnsafePointer<CChar>, to new: UnsafePointer<CChar>) throws(Errno) {
        try retrying { linkat(AT_FDCWD, existing, AT_FDCWD, new, 0) }
    }

    package func rename(_ from: UnsafePointer<CChar>, to: UnsafePointer<CChar>, _ mode: RenameMode) throws(Errno) {
        switch mode {
        case .replace: try retrying { Glibc.rename(from, to) }
        case .noReplace: try retrying { uploader_rename_noreplace(AT_FDCWD, from, AT_FDCWD, to) }
        case .exchange: try retrying { uploader_rename_exchange(AT_FDCWD, from, AT_FDCWD, to) }
        }
    }

    package func unlink(_ path: UnsafePointer<CChar>) throws(Errno) {
        try retrying { Glibc.unlink(path) }
    }

    package func makeDirectory(_ path: UnsafePointer<CChar>, mode: UInt32) throws(Errno) {
        try retrying { mkdir(path, mode_t(mode)) }
    }

    package func setPermissions(of fd: SystemDescriptor, to permissions: UInt32) throws(Errno) {
        try retrying { fchmod(fd.rawValue, mode_t(permissions)) }
    }

    package func setModificationTime(of fd: SystemDescriptor, to nanos: Int64) throws(Errno) {
        let time = timespec(tv_sec: Int(nanos / 1_000_000_000), tv_nsec: Int(nanos % 1_000_000_000))
        var times = [time, time]
        try retrying { futimens(fd.rawValue, &times) }
    }

    package func copyRange(from input: SystemDescriptor, at offset: inout Int64, to output: SystemDescriptor,
                           count: Int) throws(Errno) -> Int {
        try retrying { uploader_copy_file_range(input.rawValue, &offset, output.rawValue, UInt(count)) }
    }

    package func openDirectory(_ path: UnsafePointer<CChar>) throws(Errno) -> DirectoryStream {
        guard let dir = opendir(path) else { throw Errno.current }
        return DirectoryStream(rawValue: UInt(bitPattern: Int(bitPattern: dir)))
    }

    package func nextEntry(_ stream: DirectoryStream) throws(Errno) -> FileSystem.Entry? {
        guard let dir = OpaquePointer(bitPattern: stream.rawValue) else { throw Errno.invalid }
        Errno.current = Errno(rawValue: 0)
        guard let entry = readdir(dir) else {
            let code = Errno.current
            if code.rawValue != 0 { throw code }
            return nil
        }
        let name: [UInt8] = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            return Array(bytes[0..<(bytes.firstIndex(of: 0) ?? bytes.count)])
        }
        let kind: FileSystem.Kind?
        switch Int32(entry.pointee.d_type) {
        case Int32(DT_REG): kind = .regular
        case Int32(DT_DIR): kind = .directory
        case Int32(DT_LNK): kind = .symlink
        case Int32(DT_UNKNOWN): kind = nil
        default: kind = .other
        }
        return FileSystem.Entry(name: RelativePath(bytes: name), kind: kind)
    }

    package func closeDirectory(_ stream: DirectoryStream) {
        if let dir = OpaquePointer(bitPattern: stream.rawValue) { closedir(dir) }
    }
}
