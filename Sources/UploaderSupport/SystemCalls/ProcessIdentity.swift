@preconcurrency import Glibc

/// Who this process acts as on the file system (its effective user and group), read where a
/// decision depends on it — whether it may chown, whose file a producer's is.
package enum ProcessIdentity {
    /// geteuid(2).
    package static var effectiveUser: UInt32 { geteuid() }
    /// getegid(2).
    package static var effectiveGroup: UInt32 { getegid() }
    /// Root, who may chown and link any file (CAP_CHOWN, CAP_FOWNER).
    package static var isRoot: Bool { geteuid() == 0 }
    /// getpid(2).
    package static var processID: Int32 { getpid() }
    /// gethostname(2): this machine's name.
    package static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        _ = gethostname(&buffer, buffer.count - 1)
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    /// initgroups(3), setgid(2), setuid(2): as root, each sets the real, effective and saved ids,
    /// so the process is `user` with its groups for good. Nil once it is; else why not.
    package static func become(_ user: UserDatabase.User) -> Errno? {
        if initgroups(user.name, user.gid) != 0 || setgid(user.gid) != 0 || setuid(user.uid) != 0 { return Errno.current }
        return nil
    }
    /// kill(2) of a process group (`group` > 0); false when it is gone or not ours.
    @discardableResult
    package static func killGroup(_ group: Int32) -> Bool { kill(-group, SIGKILL) == 0 }
}
