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
        let owners = Dictionary(grouping: profiles.compactMap { profile -> (UInt32, String)? in
            // One that cannot be looked at is created by this command, as this user (or refused there).
            do { return (try FileSystem.statusFollowingLinks(path: profile.spool.root).owner, profile.name) } catch { return nil }
        }, by: \.0)
        let euid = ProcessIdentity.effectiveUser
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

    /// Takes on `uid` and its groups, for good (`ProcessIdentity.become`).
    private static func become(_ uid: UInt32, command: String) -> String? {
        guard let user = UserDatabase.user(id: uid) else {
            return "\(command): the spool belongs to uid \(uid), which has no passwd entry; run the command as that user"
        }
        if let error = ProcessIdentity.become(user) {
            return "\(command): cannot act as \(user.name), the spool's owner: \(error.description)"
        }
        return nil
    }

    static func userName(_ uid: UInt32) -> String { UserDatabase.userName(uid) ?? "uid \(uid)" }
}
