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

    /// unlink(2) of a plain path; a failure is thrown as `unlink PATH: …`.
    package static func unlink(path: String) throws {
        try retryingEINTR("unlink", path: path) { Glibc.unlink(path) }
    }

    /// What access(2) is asked about (for the real user, as a setuid program would).
    package enum Permission: Sendable {
        case read, execute

        var mode: Int32 { self == .read ? R_OK : X_OK }
    }

    /// nil when the real user may `permission` `path`, else why not (access(2)).
    package static func accessRefusal(path: String, _ permission: Permission) -> Errno? {
        access(path, permission.mode) == 0 ? nil : Errno.current
    }

    /// getcwd(3): the working directory, nil when it cannot be named (removed, or no permission).
    package static func currentDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
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
