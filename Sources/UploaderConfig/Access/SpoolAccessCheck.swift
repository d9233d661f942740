import Foundation
import UploaderSupport

/// Whether the service user can use each profile's spool as it is on disk now: reach and write
/// the directories that exist, create the ones that do not, own them, and give the outbox to the
/// producers group. Warnings (the machine may still change before the service starts), each
/// naming the directory and the fix. Looks only.
enum SpoolAccessCheck {
    static func warnings(_ profiles: [Profile], service: LocalUser?, diagnostics: inout ConfigDiagnostics) {
        guard let service, service.uid != 0 else { return }
        let user = service.name
        for profile in profiles {
            let paths = profile.spool
            for (role, dir) in [("spool", paths.root), ("outbox", paths.outbox), ("sent", paths.sent), ("retry", paths.retry)] {
                let what = "\(role) \(dir) of [outbox \(profile.name)]"
                guard let info = LocalUser.status(dir) else {
                    let parent = nearestExisting(above: dir)
                    if let refusal = service.firstRefusal(3, at: parent) {
                        diagnostics.warning(profile.line, "the service user \(user) cannot create \(what): \(refused(refusal, want: parent))")
                    }
                    continue
                }
                if let refusal = service.firstRefusal(3, at: dir) {
                    diagnostics.warning(profile.line, "the service user \(user) cannot use \(what): \(refused(refusal, want: dir))")
                } else if info.owner != service.uid {
                    diagnostics.warning(profile.line, "\(what) is owned by \(LocalUser.userName(info.owner)), not by the service user \(user); "
                        + "chown \(user) \(dir)")
                }
            }
            if let group = profile.producers, let gid = LocalUser.groupID(named: group), !service.groups.contains(gid) {
                diagnostics.warning(profile.line, "the service user \(user) is not in the producers group \(group) of [outbox \(profile.name)], "
                    + "so it cannot give the outbox to that group: adduser \(user) \(group), then restart the service")
            }
        }
    }

    /// `DIR (mode 0700, alice:alice) does not let it search` or `… write`, with the usual fix.
    private static func refused(_ refusal: (path: String, info: FileSystem.Status), want target: String) -> String {
        let mode = String(format: "%04o", refusal.info.permissions)
        let owner = "\(LocalUser.userName(refusal.info.owner)):\(LocalUser.groupName(refusal.info.group))"
        if refusal.path != target {
            return "\(refusal.path) (mode \(mode), \(owner)) does not let it pass; let it search there (chmod o+x) or put the spool elsewhere"
        }
        return "\(refusal.path) (mode \(mode), \(owner)) does not let it write; chown it to the service user"
    }

    private static func nearestExisting(above path: String) -> String {
        var candidate = path
        while candidate != "/" {
            candidate = candidate.lastIndex(of: "/").map { $0 == candidate.startIndex ? "/" : String(candidate[..<$0]) } ?? "/"
            if LocalUser.status(candidate) != nil { return candidate }
        }
        return "/"
    }
}
