import Foundation
import UploaderSupport

/// Who besides root and the service user can read a secret (a secret file, or a config that
/// holds a secret as written): `check-config` warns exactly when someone can, names them, and
/// says what to change.
enum SecretExposure {
    /// The users other than root and `service` whose permissions along the path let them read it.
    static func readers(of path: String, service: LocalUser?) -> [LocalUser] {
        LocalUser.all().filter { $0.uid != 0 && $0.uid != service?.uid && $0.may(4, at: path) }
    }

    /// `FILE is readable by …; fix: …` for `readers` (not empty), one line.
    static func description(of path: String, readers: [LocalUser], service: LocalUser?) -> String {
        // Looked at just before by `readers`; gone since, it shows as mode 0000 root:root.
        let info = LocalUser.status(path)
        let permissions = info?.permissions ?? 0
        let mode = String(format: "%04o", permissions)
        let owner = LocalUser.userName(info?.owner ?? 0), group = LocalUser.groupName(info?.group ?? 0)
        let shown = readers.prefix(5).map(\.name).joined(separator: ", ") + (readers.count > 5 ? " and \(readers.count - 5) more" : "")
        let who: String
        if permissions & 0o004 != 0 { who = "every user (mode \(mode), \(owner):\(group))" }
        else { who = "user \(shown) (mode \(mode), \(owner):\(group))" }
        let serviceName = service?.name ?? LocalUser.packagedServiceName
        let serviceGroup = service.map { LocalUser.groupName($0.gid) } ?? LocalUser.packagedServiceName
        return "\(path) is readable by \(who), not only by root and the service user \(serviceName); "
            + "fix: chown root:\(serviceGroup) \(path) && chmod 640 \(path) (group \(serviceGroup) holding only \(serviceName)), "
            + "or make it 0600 root:root and give it by LoadCredential= (a relative path is looked up in $CREDENTIALS_DIRECTORY)"
    }

    /// The warnings for a loaded config: every secret file outside `$CREDENTIALS_DIRECTORY`, and the
    /// config itself when it holds a secret as written (not `${VAR}`).
    static func warnings(_ sections: [IniSection], configPath: String, checkConfigFile: Bool, baseDirectory: String,
                         credentialsDirectory: String?, service: LocalUser?, diagnostics: inout ConfigDiagnostics) {
        var seen = Set<String>()
        for section in sections {
            for entry in section.entries where ConfigKeys.isSecretFile(entry.key) && entry.isValid && !entry.value.isEmpty {
                let path = ConfigFiles.secretPath(entry.value, relativeTo: baseDirectory, credentialsDirectory: credentialsDirectory)
                if let credentials = credentialsDirectory, path.hasPrefix(ConfigFiles.resolve(credentials, relativeTo: "/") + "/") { continue }
                guard seen.insert(path).inserted else { continue }
                let readers = readers(of: path, service: service)
                guard !readers.isEmpty else { continue }
                diagnostics.warning(entry.line, "secret file (\(entry.key)) " + description(of: path, readers: readers, service: service))
            }
        }
        guard checkConfigFile else { return }
        let inline = sections.flatMap(\.entries).first { entry in
            (ConfigKeys.secretKeys.contains(entry.key) || (entry.key.hasPrefix("header.") && ConfigKeys.isSensitiveHeader(String(entry.key.dropFirst(7)))))
                && entry.isValid && entry.asWritten == nil && !entry.value.isEmpty
        }
        guard let inline else { return }
        let path = baseDirectory + "/" + (configPath.split(separator: "/").last.map(String.init) ?? configPath)
        let readers = readers(of: path, service: service)
        guard !readers.isEmpty else { return }
        diagnostics.warning(nil, "holds a secret as written (\(inline.key) on line \(inline.line)) and "
            + description(of: path, readers: readers, service: service) + "; or move it to \(inline.key)_file or ${VAR}")
    }
}
