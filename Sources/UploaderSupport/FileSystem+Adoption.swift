@preconcurrency import Glibc
import CSysShims
import Foundation

/// The calls that let the daemon make a producer's file its own: with `fs.protected_hardlinks = 1`
/// (every Debian's default) the kernel refuses `link(2)` of a file we neither own nor may write,
/// and the spool's moves are links. Such a file is copied, and the copy swapped in under its name.
extension FileSystem {
    /// `fs.protected_hardlinks`, read once: when 0, any file we can see may be linked.
    private static let hardlinksProtected: Bool = {
        // Unreadable (no /proc): taken as protected, the safe side (a copy where a link would do).
        guard let text = try? String(contentsOfFile: "/proc/sys/fs/protected_hardlinks", encoding: .utf8) else { return true }
        return text.trimmingCharacters(in: .whitespacesAndNewlines) != "0"
    }()

    /// Whether the kernel lets this process link the regular file at `path` (`status` its lstat):
    /// our own file, root (CAP_FOWNER), no protection, or a file we may read and write that is
    /// neither setuid nor setgid-executable — the rule of `may_linkat` in fs/namei.c.
    package static func mayLink(_ path: RelativePath, in directory: String, status: Status) -> Bool {
        let euid = geteuid()
        if status.owner == UInt32(euid) || euid == 0 || !hardlinksProtected { return true }
        if status.permissions & UInt32(S_ISUID) != 0 { return false }
        if status.permissions & UInt32(S_ISGID | S_IXGRP) == UInt32(S_ISGID | S_IXGRP) { return false }
        return path.withCString(in: directory) { faccessat(AT_FDCWD, $0, R_OK | W_OK, AT_EACCESS) } == 0
    }

    /// Creates `name` (never over an existing one), copies into it every byte of the open file
    /// `fd` (`status` its fstat), gives it that file's permission bits and mtime, and fsyncs it.
    /// The kernel copies (`copy_file_range`); where it cannot, a 1 MiB buffer does. A failure
    /// removes the half-made copy.
    package static func copyFile(from fd: Int32, status: Status, to name: RelativePath, in directory: String) throws {
        let display = name.displayed(in: directory)
        let out = try FileDescriptor.open(name, in: directory, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode: 0o600,
                                          operation: "create")
        do {
            try copyBytes(from: fd, size: status.size, to: out.rawValue, display: display)
            try retryingEINTR("chmod", path: display) { fchmod(out.rawValue, mode_t(status.permissions & 0o666)) }
            let mtime = timespec(tv_sec: Int(status.mtimeNanos / 1_000_000_000), tv_nsec: Int(status.mtimeNanos % 1_000_000_000))
            var times = [mtime, mtime]
            try retryingEINTR("utimens", path: display) { futimens(out.rawValue, &times) }
            try out.sync(display: display)
            out.close()
        } catch {
            out.close()
            _ = name.withCString(in: directory) { Glibc.unlink($0) }
            throw error
        }
    }

    /// `size` bytes from the start of `input` to the end of `output`.
    private static func copyBytes(from input: Int32, size: Int64, to output: Int32, display: String) throws {
        var offset: Int64 = 0
        while offset < size {
            let left = UInt(min(size - offset, 1 << 30))
            let n = uploader_copy_file_range(input, &offset, output, left)
            if n > 0 { continue }
            if n == 0 { break }  // shorter than it was: the caller's check sees the change
            switch Errno.current {
            case .interrupted: continue
            case .crossDevice, .invalid, .noSystemCall, .notSupported: return try copyByBuffer(from: input, at: offset, to: output, display: display)
            default: throw SystemError("copy_file_range", path: display)
            }
        }
    }

    private static func copyByBuffer(from input: Int32, at start: Int64, to output: Int32, display: String) throws {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset = start
        while true {
            let n = try buffer.withUnsafeMutableBytes { raw in
                try retryingEINTR("read", path: display) { pread(input, raw.baseAddress, raw.count, off_t(offset)) }
            }
            if n == 0 { return }
            try buffer.withUnsafeBytes { try writeAll(UnsafeRawBufferPointer(rebasing: $0[0..<n]), to: output, path: display) }
            offset += Int64(n)
        }
    }

    /// renameat2(RENAME_EXCHANGE): `a` and `b` swap the files they name, in one step.
    package static func exchange(_ a: RelativePath, in aDir: String, with b: RelativePath, in bDir: String) throws {
        try a.withCString(in: aDir) { pa in
            try b.withCString(in: bDir) { pb in
                _ = try retryingEINTR("exchange", path: "\(a.displayed(in: aDir)) with \(b.displayed(in: bDir))") {
                    uploader_rename_exchange(AT_FDCWD, pa, AT_FDCWD, pb)
                }
            }
        }
    }
}
