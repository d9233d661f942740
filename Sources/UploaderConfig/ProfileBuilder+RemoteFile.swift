import Foundation
import UploaderSupport

/// The keys of `sftp://`, `ftps://` and `ftp://` destinations and their rules (DESIGN §14),
/// shared by the builder, `ConfigKeys` and check-config.
enum RemoteFileSettings {
    static let keys = ["private_key_file", "passphrase_file", "known_hosts", "host_key_sha256", "temp_name", "exists", "tls"]

    /// Keys of the HTTP destinations that mean nothing here.
    static let httpOnlyKeys = [
        "method", "body", "multipart_field", "auth", "token", "token_file", "username", "proxy", "protocol", "tus_chunk_size",
    ]
    static let sshOnlyKeys = ["private_key_file", "passphrase_file", "known_hosts", "host_key_sha256"]
    static let tlsKeys = ["ca_file", "client_cert", "client_key", "insecure_skip_verify"]

    static func scheme(of url: String) -> RemoteFileTarget.Scheme? {
        let lower = url.lowercased()
        for scheme in [RemoteFileTarget.Scheme.sftp, .ftps, .ftp] where lower.hasPrefix(scheme.rawValue + "://") { return scheme }
        return nil
    }

    /// `SHA256:BASE64` or `BASE64` (as `ssh-keygen -lf` prints it) → the base64 without padding,
    /// nil when it is not 32 bytes.
    static func fingerprint(_ text: String) -> String? {
        var value = text.trimmingCharacters(in: .whitespaces)
        if value.lowercased().hasPrefix("sha256:") { value = String(value.dropFirst(7)) }
        while value.hasSuffix("=") { value.removeLast() }
        let padded = value + String(repeating: "=", count: (4 - value.count % 4) % 4)
        guard let data = Data(base64Encoded: padded), data.count == 32 else { return nil }
        return value
    }
}

extension ProfileBuilder {
    /// With an http(s):// or s3:// url, every sftp/ftp key is a mistake: report each.
    mutating func rejectRemoteFileKeys() -> RemoteFileTarget? {
        for key in RemoteFileSettings.keys where reader.entry(key) != nil {
            reader.diagnostics.error(reader.line(key), "\(key) is set but url is not sftp://, ftps:// or ftp://; it is only used with those")
        }
        return nil
    }

    /// Parses `url = sftp://USER@HOST[:PORT]/PATH` (or ftps://, ftp://) and its keys; nil (after reporting) when invalid.
    mutating func remoteFileTarget(_ scheme: RemoteFileTarget.Scheme) -> RemoteFileTarget? {
        let title = reader.section.title
        let schemeName = scheme.rawValue + "://"
        var ok = true
        func refuse(_ key: String, _ why: String) {
            guard reader.entry(key) != nil else { return }
            reader.diagnostics.error(reader.line(key), "\(key) is not used with \(schemeName) urls\(why)")
            ok = false
        }
        for key in RemoteFileSettings.httpOnlyKeys { refuse(key, "") }
        for entry in reader.section.entries where entry.key.hasPrefix("form.") || entry.key.hasPrefix("header.") {
            reader.diagnostics.error(entry.line, "\(entry.key) is not used with \(schemeName) urls")
            ok = false
        }
        if scheme == .sftp {
            for key in RemoteFileSettings.tlsKeys + ["tls"] { refuse(key, " (SSH checks the server by its host key)") }
        } else {
            for key in RemoteFileSettings.sshOnlyKeys { refuse(key, " (only with sftp://)") }
        }
        guard let (user, host, port, path) = parseRemoteURL(scheme) else { return nil }
        let tempName = remoteTempName()
        var target = RemoteFileTarget(scheme: scheme, user: user, host: host, port: port, path: path,
                                      tempName: tempName ?? (try! Template(parsing: RemoteFileTarget.defaultTempName)),
                                      urlText: reader.text("url") ?? "")
        if tempName == nil { ok = false }
        target.exists = reader.choice("exists", default: target.exists)
        target.password = reader.entry("password") != nil || reader.entry("password_file") != nil
            ? secret("password", file: "password_file") : nil
        if (reader.entry("password") != nil || reader.entry("password_file") != nil) && target.password == nil { ok = false }
        switch scheme {
        case .sftp:
            target.privateKeyFile = reader.readablePath("private_key_file")
            if reader.entry("passphrase_file") != nil {
                target.passphrase = secret("passphrase", file: "passphrase_file")
                if target.passphrase == nil { ok = false }
                if reader.entry("private_key_file") == nil {
                    reader.diagnostics.error(reader.line("passphrase_file"), "passphrase_file needs private_key_file")
                    ok = false
                }
            }
            if reader.entry("private_key_file") == nil && target.password == nil {
                reader.diagnostics.error(reader.line("url"), "sftp:// url needs private_key_file or password_file in \(title)")
                ok = false
            } else if reader.entry("private_key_file") != nil && target.privateKeyFile == nil {
                ok = false
            }
            ok = hostKeySettings(into: &target, title: title) && ok
        case .ftps, .ftp:
            if target.password == nil, reader.entry("password") == nil, reader.entry("password_file") == nil {
                reader.diagnostics.error(reader.line("url"), "\(schemeName) url needs password_file in \(title)")
                ok = false
            }
            target.tls = reader.choice("tls", default: target.tls)
            if scheme == .ftps, target.tls == .none {
                reader.diagnostics.error(reader.line("tls"), "tls = none contradicts ftps:// (implicit TLS); use ftp:// for plain FTP")
                ok = false
            } else if target.tls == .none {
                reader.diagnostics.warning(reader.line("tls"),
                    "tls = none in \(title): the password and the files go over plain FTP, readable by anyone on the way")
            }
        }
        return ok ? target : nil
    }

    /// `known_hosts` or `host_key_sha256`: one is needed; there is no trust on first use.
    private mutating func hostKeySettings(into target: inout RemoteFileTarget, title: String) -> Bool {
        let hasFile = reader.entry("known_hosts") != nil
        let hasPin = reader.entry("host_key_sha256") != nil
        if hasFile && hasPin {
            reader.diagnostics.error(reader.line("host_key_sha256"), "set known_hosts or host_key_sha256, not both")
            return false
        }
        if !hasFile && !hasPin {
            reader.diagnostics.error(reader.line("url"),
                "sftp:// url needs known_hosts or host_key_sha256 in \(title): the server's host key is always checked "
                + "(ssh-keygen -lf on the server's key prints its SHA256 fingerprint)")
            return false
        }
        if hasFile {
            target.knownHosts = reader.readablePath("known_hosts")
            return target.knownHosts != nil
        }
        target.hostKeySHA256 = reader.value("host_key_sha256", kind: "fingerprint",
                                            hint: "the SHA256:… that ssh-keygen -lf prints, 43 base64 characters",
                                            RemoteFileSettings.fingerprint)
        return target.hostKeySHA256 != nil
    }

    /// `temp_name`: one name (no `/`) with `{name}` in it, so two files never share one.
    private mutating func remoteTempName() -> Template? {
        let text = reader.text("temp_name") ?? RemoteFileTarget.defaultTempName
        guard let template = parseTemplate(text, key: "temp_name", redact: false) else { return nil }
        if text.contains("/") || text.isEmpty {
            reader.diagnostics.error(reader.line("temp_name"), "temp_name must be a name without \"/\" (it goes beside the final name)")
            return nil
        }
        if !template.placeholders.contains(.name) {
            reader.diagnostics.error(reader.line("temp_name"), "temp_name must contain {name}, so that two files never share a temporary name")
            return nil
        }
        return template
    }

    /// `SCHEME://USER@HOST[:PORT]/PATH`: a user, a literal host, a path naming the file.
    /// Messages never echo the URL.
    private mutating func parseRemoteURL(_ scheme: RemoteFileTarget.Scheme) -> (String, String, Int, Template)? {
        guard let text = reader.text("url") else { return nil }
        let line = reader.line("url")
        let rest = text.dropFirst(scheme.rawValue.count + 3)
        guard let slash = rest.firstIndex(of: "/") else {
            reader.diagnostics.error(line, "url has no path (write \(scheme.rawValue)://USER@HOST/DIR/{path})")
            return nil
        }
        let authority = rest[..<slash]
        let pathText = String(rest[slash...])
        guard let at = authority.lastIndex(of: "@"), at > authority.startIndex else {
            reader.diagnostics.error(line, "url needs the login's user name (\(scheme.rawValue)://USER@HOST/…)")
            return nil
        }
        let user = authority[..<at].removingPercentEncoding ?? String(authority[..<at])
        if user.contains(":") {
            reader.diagnostics.error(line, "url must not contain a password; use password_file")
            return nil
        }
        let hostPort = authority[authority.index(after: at)...]
        if let problem = URLCheck.problem("http://" + hostPort + "/") {
            reader.diagnostics.error(line, problem)
            return nil
        }
        var host = String(hostPort)
        var port = scheme.defaultPort
        if let colon = hostPort.lastIndex(of: ":"), !hostPort[colon...].contains("]") {
            host = String(hostPort[..<colon])
            port = Int(hostPort[hostPort.index(after: colon)...]) ?? port
        }
        if pathText.contains("?") || pathText.contains("#") || pathText.contains(" ") {
            reader.diagnostics.error(line, "url's path must not contain ?, # or spaces (write a space as %20)")
            return nil
        }
        if pathText.hasSuffix("/") || pathText == "/" {
            reader.diagnostics.error(line, "url must name the file, not a directory (end it with {path} or {name})")
            return nil
        }
        guard let path = parseTemplate(pathText, key: "url", redact: false) else { return nil }
        return (user, host, port, path)
    }
}

extension RemoteFileTarget {
    /// The keys check-config prints for this destination (nil: a secret, shown `<redacted>`).
    var effectiveEntries: [(String, String?)] {
        var entries: [(String, String?)] = [("temp_name", tempName.source), ("exists", exists.rawValue)]
        switch scheme {
        case .sftp:
            if let privateKeyFile { entries.append(("private_key_file", privateKeyFile)) }
            if let passphrase { entries.append(passphrase.file.map { ("passphrase_file", $0) } ?? ("passphrase", nil)) }
            if let knownHosts { entries.append(("known_hosts", knownHosts)) }
            if let hostKeySHA256 { entries.append(("host_key_sha256", "SHA256:" + hostKeySHA256)) }
        case .ftps, .ftp:
            entries.append(("tls", tls.rawValue))
        }
        if let password { entries.append(password.file.map { ("password_file", $0) } ?? ("password", nil)) }
        return entries
    }
}
