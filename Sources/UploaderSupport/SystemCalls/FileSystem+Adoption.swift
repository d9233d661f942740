@preconcurrency import Glibc
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

    /// Whether this process may create and remove names in the directory holding `path`.
    package static func mayWriteDirectory(of path: RelativePath, in directory: String) -> Bool {
        let parent = path.parent.map { $0.displayed(in: directory) } ?? directory
        return faccessat(AT_FDCWD, parent, W_OK | X_OK, AT_EACCESS) == 0
    }

    /// Creates `name` (never over an existing one), copies into it every byte of the open file
    /// `fd` (`status` its fstat), gives it that file's permission bits and mtime, and fsyncs it.
    package static func copyFile(from fd: Int32, status: Status, to name: RelativePath, in directory: String) throws {
        try kernel.copyFile(from: fd, status: status, to: name, in: directory)
    }

    /// renameat2(RENAME_EXCHANGE): `a` and `b` swap the files they name, in one step.
    package static func exchange(_ a: RelativePath, in aDir: String, with b: RelativePath, in bDir: String) throws {
        try kernel.exchange(a, in: aDir, with: b, in: bDir)
    }
}
