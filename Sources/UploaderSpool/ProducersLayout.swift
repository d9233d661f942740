import Foundation
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
        guard let gid = LocalUser.groupID(named: group) else {
            throw Failure(description: "producers group \(group) does not exist on this machine; create it (groupadd \(group)) or change producers")
        }
        let paths = profile.spool
        let root = try status(paths.root)
        if root.group != gid || root.permissions & 0o7070 != 0o050 {
            try change(paths.root, root, group: gid, mode: (root.permissions & 0o0707) | 0o050, groupName: group)
        }
        // Read by `status` as a producer: readable by all who reach the spool root (the service and GROUP).
        // Harmless when refused: a producer's `status` then says it cannot read them, with the path.
        for file in [paths.lockFile, paths.stateFile] where FileSystem.exists(path: file) {
            _ = try? FileSystem.changePermissions(path: file, to: 0o644)
        }
        for dir in [paths.sent, paths.retry] {
            let info = try status(dir)
            if info.group == gid {
                try change(dir, info, group: ProcessIdentity.effectiveGroup, mode: info.permissions & 0o0707 | 0o050, groupName: "")
            }
        }
        let outbox = try status(paths.outbox)
        let was = describe(outbox)
        if outbox.group != gid || outbox.permissions != 0o2770 {
            try change(paths.outbox, outbox, group: gid, mode: 0o2770, groupName: group)
        }
        let now = describe(try status(paths.outbox))
        logger.info(was == now ? "outbox open to producers" : "outbox made ready for producers",
                    ["profile": profile.name, "outbox": paths.outbox, "mode": now, "was": was])
    }

    private static func status(_ path: String) throws -> FileSystem.Status {
        try FileSystem.statusFollowingLinks(path: path)
    }

    /// chown to `group` (owner unchanged) and chmod to `mode`; only the owner (or root) can.
    private static func change(_ path: String, _ info: FileSystem.Status, group: UInt32, mode: UInt32, groupName: String) throws {
        let user = LocalUser.userName(ProcessIdentity.effectiveUser)
        guard ProcessIdentity.isRoot || info.owner == ProcessIdentity.effectiveUser else {
            throw Failure(description: "\(path) is owned by \(LocalUser.userName(info.owner)), not by \(user): it cannot be made "
                + "\(String(format: "%04o", mode)) for producers; chown \(user) \(path)")
        }
        if info.group != group {
            do {
                try FileSystem.changeGroup(path: path, to: group)
            } catch let cause as SystemError {
                let hint = cause.code == .notPermitted || cause.code == .invalid
                    ? "; the service user must be in group \(groupName) (adduser \(user) \(groupName)), and a systemd unit must allow chown "
                        + "(SystemCallFilter=@chown after ~@privileged) and must not set PrivateUsers="
                    : ""
                throw Failure(description: "\(cause)\(hint)")
            }
        }
        do {
            try FileSystem.changePermissions(path: path, to: mode)
        } catch let cause as SystemError {
            let hint = cause.code == .notPermitted ? "; the unit must not set RestrictSUIDSGID= (the outbox needs its setgid bit)" : ""
            throw Failure(description: "\(cause)\(hint)")
        }
        // A check of what the kernel kept (a setgid bit dropped); a path that cannot be looked at
        // now, just after its chmod succeeded, is left to the next start to find.
        if let after = try? FileSystem.statusFollowingLinks(path: path), after.permissions != mode {
            throw Failure(description: "chmod \(String(format: "%04o", mode)) \(path) left it \(String(format: "%04o", after.permissions)); "
                + "the service user must be in group \(groupName) for its setgid bit (adduser \(user) \(groupName))")
        }
    }

    /// `2770 uploader:uploader-drop`
    private static func describe(_ info: FileSystem.Status) -> String {
        String(format: "%04o", info.permissions) + " \(LocalUser.userName(info.owner)):\(LocalUser.groupName(info.group))"
    }
}
