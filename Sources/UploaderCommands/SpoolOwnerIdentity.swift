@preconcurrency import Glibc
import Foundation
import UploaderSupport
import UploaderConfig

/// Keeps the spool the service user's whatever user types a command: a file or manifest that
/// root's `retry` or `run --once` wrote would be root's, and the service could then neither
/// link nor rewrite it (`fs.protected_hardlinks = 1`). So root takes on the identity of the
/// spools' owner (user, primary group, supplementary groups) for the rest of the command, and
/// another user who does not own a spool is refused a command that writes beyond its outbox,
/// with the user to run as named.
enum SpoolOwnerIdentity {
    /// nil when the command may go on (as root, now as the spools' owner); else the one error line.
    static func take(for profiles: [Profile], command: String, writesBeyondOutbox: Bool) -> String? {
        let owners = Dictionary(grouping: profiles.compactMap { profile -> (uid_t, String)? in
            var st = stat()
            guard stat(profile.spool.root, &st) == 0 else { return nil }  // created by this command, as this user
            return (st.st_uid, profile.name)
        }, by: \.0)
        let euid = geteuid()
        guard let (owner, _) = owners.first, !(owners.count == 1 && owner == euid) else { return nil }
        if euid == 0 {
            guard owners.count == 1 else {
                let list = owners.map { "\(userName($0.key)) (\($0.value.map(\.1).joined(separator: ", ")))" }.sorted()
                return "\(command): the spools of these profiles belong to different users: \(list.joined(separator: "; ")); name one user's profiles with --profile"
            }
            return become(owner, command: command)
        }
        guard writesBeyondOutbox else { return nil }
        let foreign = owners.filter { $0.key != euid }.map { "\(userName($0.key))" }.sorted()
        return "\(command): the spool belongs to user \(foreign.joined(separator: ", ")), not to \(userName(euid)); run it as that user (sudo -u \(foreign[0]) uploader \(command) …) or as root"
    }

    /// initgroups, setgid, setuid (as root each sets real, effective and saved ids): `uid` and its groups, for good.
    private static func become(_ uid: uid_t, command: String) -> String? {
        guard let entry = getpwuid(uid) else {
            return "\(command): the spool belongs to uid \(uid), which has no passwd entry; run the command as that user"
        }
        let gid = entry.pointee.pw_gid
        if initgroups(entry.pointee.pw_name, gid) != 0 || setgid(gid) != 0 || setuid(uid) != 0 {
            return "\(command): cannot act as \(userName(uid)), the spool's owner: \(Errno.current.description)"
        }
        return nil
    }

    static func userName(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid) else { return "uid \(uid)" }
        return String(cString: entry.pointee.pw_name)
    }
}
