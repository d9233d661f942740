@preconcurrency import Glibc
import UploaderSupport
import UploaderConfig

/// Makes a spool fit for producers who are other users (`producers = GROUP`), at each start:
/// the outbox `2770 service:GROUP` (setgid, so their files take the group), the spool root
/// reachable by that group (`0750 service:GROUP`) with its lock and state file readable there,
/// and sent/ and retry/ kept out of its reach (never in GROUP). Without `producers` nothing is
/// changed: directories the daemon makes are 0750 and only the service writes the outbox.
package enum ProducersLayout {
    /// Why the layout cannot be made; the daemon stops with it (a restart would not help).
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Applies the layout and logs one line about the outbox; nothing when `profile.producers` is nil.
    package static func apply(_ profile: Profile, logger: Logger) throws {
        guard let group = profile.producers else { return }
        guard let entry = getgrnam(group) else {
            throw Failure(description: "producers group \(group) does not exist on this machine; create it (groupadd \(group)) or change producers")
        }
        let gid = entry.pointee.gr_gid
        let paths = profile.spool
        let root = try status(paths.root)
        if root.st_gid != gid || root.st_mode & 0o7070 != 0o050 {
            try change(paths.root, root, group: gid, mode: (root.st_mode & 0o0707) | 0o050, groupName: group)
        }
        // Read by `status` as a producer: readable by all who reach the spool root (the service and GROUP).
        for file in [paths.lockFile, paths.stateFile] where access(file, F_OK) == 0 { _ = chmod(file, 0o644) }
        for dir in [paths.sent, paths.retry] {
            let info = try status(dir)
            if info.st_gid == gid { try change(dir, info, group: getegid(), mode: info.st_mode & 0o0707 | 0o050, groupName: "") }
        }
        let outbox = try status(paths.outbox)
        let was = describe(outbox)
        if outbox.st_gid != gid || outbox.st_mode & 0o7777 != 0o2770 {
            try change(paths.outbox, outbox, group: gid, mode: 0o2770, groupName: group)
        }
        let now = describe(try status(paths.outbox))
        logger.info(was == now ? "outbox open to producers" : "outbox made ready for producers",
                    ["profile": profile.name, "outbox": paths.outbox, "mode": now, "was": was])
    }

    private static func status(_ path: String) throws -> stat {
        var info = stat()
        guard stat(path, &info) == 0 else { throw SystemError("stat", path: path) }
        return info
    }

    /// chown to `group` (owner unchanged) and chmod to `mode`; only the owner (or root) can.
    private static func change(_ path: String, _ info: stat, group: gid_t, mode: mode_t, groupName: String) throws {
        let user = LocalUser.userName(geteuid())
        guard geteuid() == 0 || info.st_uid == geteuid() else {
            throw Failure(description: "\(path) is owned by \(LocalUser.userName(info.st_uid)), not by \(user): it cannot be made "
                + "\(String(format: "%04o", mode)) for producers; chown \(user) \(path)")
        }
        if info.st_gid != group, chown(path, uid_t.max, group) != 0 {
            let cause = SystemError("chown", path: path)
            let hint = cause.code == .notPermitted || cause.code == .invalid
                ? "; the service user must be in group \(groupName) (adduser \(user) \(groupName)), and a systemd unit must allow chown "
                    + "(SystemCallFilter=@chown after ~@privileged) and must not set PrivateUsers="
                : ""
            throw Failure(description: "\(cause)\(hint)")
        }
        if chmod(path, mode) != 0 {
            let hint = Errno.current == .notPermitted ? "; the unit must not set RestrictSUIDSGID= (the outbox needs its setgid bit)" : ""
            throw Failure(description: "\(SystemError("chmod", path: path))\(hint)")
        }
        var after = stat()
        if stat(path, &after) == 0, after.st_mode & 0o7777 != mode {
            throw Failure(description: "chmod \(String(format: "%04o", mode)) \(path) left it \(String(format: "%04o", after.st_mode & 0o7777)); "
                + "the service user must be in group \(groupName) for its setgid bit (adduser \(user) \(groupName))")
        }
    }

    /// `2770 uploader:uploader-drop`
    private static func describe(_ info: stat) -> String {
        String(format: "%04o", info.st_mode & 0o7777) + " \(LocalUser.userName(info.st_uid)):\(LocalUser.groupName(info.st_gid))"
    }
}
