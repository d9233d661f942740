@preconcurrency import Glibc

/// Calls on a plain path (no spool around it) for the files and directories the daemon keeps
/// beside the spool's queue: the lock and state files, the outbox's group and mode for producers.
extension FileSystem {
    /// access(2) with F_OK: whether `path` leads to anything (following symlinks).
    package static func exists(path: String) -> Bool { access(path, F_OK) == 0 }

    /// unlink(2); true when it removed `path`, false when nothing had that name (ENOENT).
    /// Any other failure is thrown as `unlink PATH: …`.
    @discardableResult
    package static func removeIfPresent(path: String) throws -> Bool {
        if Glibc.unlink(path) == 0 { return true }
        let code = Errno.current
        if code == .noEntry { return false }
        throw SystemError("unlink", path: path, code: code)
    }

    /// chown(2) of `path` to `group`, its owner unchanged.
    package static func changeGroup(path: String, to group: UInt32) throws {
        try retryingEINTR("chown", path: path) { chown(path, uid_t.max, group) }
    }

    /// chmod(2) of `path` to `permissions` (setgid bit included).
    package static func changePermissions(path: String, to permissions: UInt32) throws {
        try retryingEINTR("chmod", path: path) { chmod(path, mode_t(permissions)) }
    }
}
