import Foundation
import UploaderSupport

/// Turns one checked `[outbox NAME]` section into a typed `Profile`, reporting every bad key.
struct ProfileBuilder {
    var reader: SectionReader
    private let name: String
    /// Whether `*_file` secrets are read now (`.skip`: they stay empty, their paths kept).
    let secrets: SecretReading

    /// Builds the profile, or nil if a required part is missing or invalid; errors land in `diagnostics`.
    /// - Parameter credentialsDirectory: `$CREDENTIALS_DIRECTORY`, where relative secret paths are looked up first.
    static func build(_ section: IniSection, name: String, baseDirectory: String, secrets: SecretReading = .read,
                      credentialsDirectory: String? = nil, diagnostics: inout ConfigDiagnostics) -> Profile? {
        var builder = ProfileBuilder(
            reader: SectionReader(section: section, baseDirectory: baseDirectory, diagnostics: diagnostics,
                                  credentialsDirectory: credentialsDirectory), name: name, secrets: secrets)
        let profile = builder.build()
        diagnostics = builder.reader.diagnostics
        return profile
    }

    private init(reader: SectionReader, name: String, secrets: SecretReading) {
        self.reader = reader
        self.name = name
        self.secrets = secrets
    }

    private mutating func build() -> Profile? {
        reader.rejectUnknownKeys()
        let hasSpool = reader.require("spool")
        let hasURL = reader.require("url")
        let root = reader.path("spool")
        let spool = SpoolPaths(root: root ?? "/", outbox: reader.path("outbox"), sent: reader.path("sent"), retry: reader.path("retry"))
        let isS3 = reader.text("url").map(S3Settings.isS3URL) ?? false
        let remoteScheme = reader.text("url").flatMap(RemoteFileSettings.scheme(of:))
        let url = isS3 || remoteScheme != nil ? nil : reader.text("url").flatMap { urlTemplate($0) }
        let s3 = isS3 ? s3Target() : rejectS3Keys()
        let remote = if let remoteScheme { remoteFileTarget(remoteScheme) } else { rejectRemoteFileKeys() }
        // sftp and ftp(s) log in with their own keys (`password_file` among them), not with `auth`.
        let auth = remoteScheme == nil ? self.auth() : Auth.none
        var profile = Profile(name: name, spool: spool, destination: .http(url ?? URLTemplate(try! Template(parsing: "http://invalid"))))
        profile.line = reader.section.line
        readProtocol(into: &profile, isS3: isS3 || remoteScheme != nil)
        profile.method = reader.choice("method", default: profile.method)
        profile.body = reader.choice("body", default: profile.body)
        if let field = reader.text("multipart_field") {
            if field.isEmpty { reader.diagnostics.error(reader.line("multipart_field"), "multipart_field must not be empty") }
            else { profile.multipartField = field }
        }
        profile.formFields = templatedFields(prefix: "form.")
        profile.headers = templatedFields(prefix: "header.")
        if !profile.formFields.isEmpty, profile.body == .raw {
            reader.diagnostics.warning(reader.line("body"), "form.* fields in \(reader.section.title) are only sent with body = multipart or json")
        }
        profile.tls = tls()
        profile.proxy = proxy()
        profile.concurrency = reader.integer("concurrency", default: profile.concurrency, in: 1...1024)
        profile.connectTimeout = reader.duration("connect_timeout", default: profile.connectTimeout, positive: true)
        profile.stallTimeout = reader.duration("stall_timeout", default: profile.stallTimeout)
        profile.timeout = reader.duration("timeout", default: profile.timeout)
        profile.maxAttempts = reader.integer("max_attempts", default: profile.maxAttempts, in: 1...1_000_000)
        profile.digest = reader.choice("digest", default: profile.digest)
        profile.backoff = reader.duration("backoff", default: profile.backoff, positive: true)
        profile.maxBackoff = reader.duration("max_backoff", default: profile.maxBackoff, positive: true)
        if profile.maxBackoff < profile.backoff {
            reader.diagnostics.error(reader.line(reader.entry("max_backoff") != nil ? "max_backoff" : "backoff"),
                "max_backoff (\(ConfigValue.formatDuration(profile.maxBackoff))) is less than backoff (\(ConfigValue.formatDuration(profile.backoff)))")
        }
        readPolicy(into: &profile)
        profile.recursive = reader.boolean("recursive", default: profile.recursive)
        if let ignore = reader.text("ignore") {
            profile.ignore = ignore.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        }
        profile.rescan = reader.duration("rescan", default: profile.rescan)
        profile.keepSent = reader.duration("keep_sent", default: profile.keepSent)
        profile.keepSentBytes = reader.size("keep_sent_bytes", default: profile.keepSentBytes, in: 0...Int64.max)
        profile.afterSend = reader.choice("after_send", default: profile.afterSend)
        if profile.afterSend == .delete, let key = ["keep_sent", "keep_sent_bytes"].first(where: { reader.entry($0) != nil }) {
            reader.diagnostics.warning(reader.line(key), "\(key) has nothing to prune in \(reader.section.title): after_send = delete leaves nothing in sent/")
        }
        profile.shutdownGrace = reader.duration("shutdown_grace", default: profile.shutdownGrace)
        profile.onSent = hook("on_sent")
        profile.onFailed = hook("on_failed")
        profile.hookTimeout = reader.duration("hook_timeout", default: profile.hookTimeout, positive: true)
        profile.producers = producersGroup()
        guard hasSpool, hasURL, root != nil, let auth else { return nil }
        if isS3 {
            guard let s3 else { return nil }
            profile.destination = .s3(s3)
        } else if remoteScheme != nil {
            guard let remote else { return nil }
            profile.destination = .remoteFile(remote)
        } else {
            guard let url else { return nil }
            profile.destination = .http(url)
        }
        profile.auth = auth
        return profile
    }

    /// Parses `url`: http(s) with a literal host, placeholders only after it.
    private mutating func urlTemplate(_ text: String) -> URLTemplate? {
        let line = reader.line("url")
        if let problem = URLCheck.problem(text) {
            reader.diagnostics.error(line, problem)
            return nil
        }
        guard let template = parseTemplate(text, key: "url", redact: false) else { return nil }
        return URLTemplate(template)
    }

    /// More braces than any real template needs; also keeps `Template(parsing:)`, which
    /// searches ahead for `}` from every `{`, from going quadratic on junk.
    private static let maxTemplateBraces = 256

    mutating func parseTemplate(_ text: String, key: String, redact: Bool) -> Template? {
        if text.utf8.lazy.filter({ $0 == UInt8(ascii: "{") }).count > Self.maxTemplateBraces {
            reader.diagnostics.error(reader.line(key), "\(key) has more than \(Self.maxTemplateBraces) \"{\"")
            return nil
        }
        do {
            return try Template(parsing: text)
        } catch let error as Template.UnknownPlaceholder {
            let known = Template.Placeholder.allCases.map { "{\($0.rawValue)}" }.joined(separator: " ")
            if redact {
                reader.diagnostics.error(reader.line(key), "unknown placeholder in \(key) (value redacted; known: \(known))")
            } else {
                var message = "unknown placeholder {\(quotedForMessage(error.name, limit: 40).dropFirst().dropLast())} in \(key)"
                if let guess = Suggestion.closest(to: error.name, among: Template.Placeholder.allCases.map(\.rawValue)) {
                    message += "; did you mean {\(guess)}?"
                } else {
                    message += " (known: \(known))"
                }
                reader.diagnostics.error(reader.line(key), message)
            }
        } catch {
            reader.diagnostics.error(reader.line(key), "invalid template in \(key)")
        }
        return nil
    }

    private static let forbiddenHeaders: Set<String> = ["content-length", "transfer-encoding", "host", "content-digest", "idempotency-key"]

    /// `form.NAME` / `header.NAME` entries in file order, values parsed as templates.
    private mutating func templatedFields(prefix: String) -> [TemplatedField] {
        var fields: [TemplatedField] = []
        for entry in reader.section.entries where entry.key.hasPrefix(prefix) && entry.key.count > prefix.count {
            let fieldName = String(entry.key.dropFirst(prefix.count))
            if prefix == "header." {
                guard URLCheck.isToken(fieldName) else {
                    reader.diagnostics.error(entry.line, "invalid header name \(quotedForMessage(fieldName, limit: 64))")
                    continue
                }
                if Self.forbiddenHeaders.contains(fieldName.lowercased()) {
                    reader.diagnostics.error(entry.line, "\(entry.key) cannot be set: uploader sets \(fieldName) itself")
                    continue
                }
            }
            guard entry.isValid else { continue }
            let redact = prefix == "header." && ConfigKeys.isSensitiveHeader(fieldName)
            if let template = parseTemplate(entry.value, key: entry.key, redact: redact) {
                fields.append(TemplatedField(name: fieldName, value: template))
            }
        }
        return fields
    }

    private mutating func tls() -> TLSOptions {
        var tls = TLSOptions()
        tls.caFile = reader.readablePath("ca_file")
        tls.clientCert = reader.readablePath("client_cert")
        tls.clientKey = reader.readablePath("client_key")
        if tls.clientKey != nil, tls.clientCert == nil, reader.text("client_cert")?.isEmpty ?? true {
            reader.diagnostics.error(reader.line("client_key"), "client_key needs client_cert")
        }
        tls.insecureSkipVerify = reader.boolean("insecure_skip_verify", default: false)
        return tls
    }

    /// `proxy`: a URL libcurl takes as a proxy; empty = none of ours (libcurl's environment
    /// variables apply). Messages never quote it: it may hold a password.
    private mutating func proxy() -> ProxyURL? {
        guard let text = reader.text("proxy"), !text.isEmpty else { return nil }
        switch ProxyURL.parse(text) {
        case .success(let proxy): return proxy
        case .failure(let error):
            reader.diagnostics.error(reader.line("proxy"), error.description)
            return nil
        }
    }

    /// A hook command: empty = none; with a `/` it is a path (resolved, must be executable), else looked up in PATH.
    private mutating func hook(_ key: String) -> String? {
        guard let value = reader.text(key), !value.isEmpty else { return nil }
        guard value.contains("/") else { return value }
        let path = ConfigFiles.resolve(value, relativeTo: reader.baseDirectory)
        if let problem = ConfigFiles.accessProblem(path, .execute) {
            reader.diagnostics.error(reader.line(key), "cannot execute \(key) \(path): \(problem)")
        }
        return path
    }
}

extension ProfileBuilder {
    private enum AuthKind: String, CaseIterable { case none, basic, bearer }

    /// The `auth` mode with its credentials; nil (after reporting) when they are missing or misplaced.
    private mutating func auth() -> Auth? {
        let kind = reader.choice("auth", default: AuthKind.none)
        let token = secret("token", file: "token_file")
        let password = secret("password", file: "password_file")
        let username = reader.text("username")
        var ok = true
        func misplaced(_ key: String, _ wanted: AuthKind) {
            guard reader.entry(key) != nil else { return }
            let current = kind == .none ? "auth is none" : "auth = \(kind.rawValue)"
            reader.diagnostics.error(reader.line(key), "\(key) is set but \(current); it is only used with auth = \(wanted.rawValue)")
            ok = false
        }
        switch kind {
        case .none:
            for key in ["token", "token_file"] { misplaced(key, .bearer) }
            for key in ["username", "password", "password_file"] { misplaced(key, .basic) }
            return ok ? Auth.none : nil
        case .bearer:
            for key in ["username", "password", "password_file"] { misplaced(key, .basic) }
            if reader.entry("token") == nil, reader.entry("token_file") == nil {
                reader.diagnostics.error(reader.line("auth"), "auth = bearer needs token or token_file in \(reader.section.title)")
                return nil
            }
            guard ok, let token else { return nil }
            return .bearer(token: token)
        case .basic:
            for key in ["token", "token_file"] { misplaced(key, .bearer) }
            if reader.entry("username") == nil {
                reader.diagnostics.error(reader.line("auth"), "auth = basic needs username in \(reader.section.title)")
                ok = false
            } else if let username, username.isEmpty || username.contains(":") {
                reader.diagnostics.error(reader.line("username"), "username must be non-empty and must not contain \":\"")
                ok = false
            }
            if reader.entry("password") == nil, reader.entry("password_file") == nil {
                reader.diagnostics.error(reader.line("auth"), "auth = basic needs password or password_file in \(reader.section.title)")
                return nil
            }
            guard ok, let username, let password else { return nil }
            return .basic(username: username, password: password)
        }
    }

    /// `KEY` inline or `KEY_file` read now (one trailing newline stripped). Never echoes the secret.
    mutating func secret(_ key: String, file fileKey: String) -> Secret? {
        if reader.entry(key) != nil, reader.entry(fileKey) != nil {
            reader.diagnostics.error(reader.line(fileKey), "set \(key) or \(fileKey), not both")
            return nil
        }
        if let value = reader.text(key) {
            if secrets == .skip { return Secret(value: "") }
            guard !value.isEmpty else {
                reader.diagnostics.error(reader.line(key), "\(key) is empty")
                return nil
            }
            return Secret(value: value)
        }
        guard let path = reader.path(fileKey) else { return nil }
        if secrets == .skip { return Secret(value: "", file: path) }
        let line = reader.line(fileKey)
        switch ConfigFiles.read(path, limit: 65_536) {
        case .failure(let failure):
            reader.diagnostics.error(line, "cannot read \(fileKey) \(path): \(failure.reason)")
            return nil
        case .success(let contents):
            var bytes = contents.bytes[...]
            if bytes.last == UInt8(ascii: "\n") { bytes = bytes.dropLast() }
            if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
            guard let value = String(validating: bytes, as: UTF8.self) else {
                reader.diagnostics.error(line, "\(fileKey) \(path) is not valid UTF-8")
                return nil
            }
            guard !value.isEmpty else {
                reader.diagnostics.error(line, "\(fileKey) \(path) is empty")
                return nil
            }
            guard !value.unicodeScalars.contains(where: isControl) else {
                reader.diagnostics.error(line, "\(fileKey) \(path) holds a line break or control character inside the secret")
                return nil
            }
            return Secret(value: value, file: path)
        }
    }
}
