import UploaderSupport

/// The keys each section accepts, and the messages for keys it does not.
package enum ConfigKeys {
    static let global = ["log_level", "log_format", "metrics_file", "index"]

    static let outbox = [
        "spool", "outbox", "sent", "retry", "url", "method", "body", "multipart_field",
        "auth", "token", "token_file", "username", "password", "password_file",
        "ca_file", "client_cert", "client_key", "insecure_skip_verify", "proxy",
        "concurrency", "connect_timeout", "stall_timeout", "timeout", "max_attempts", "digest",
        "backoff", "max_backoff", "max_rate", "recursive", "ignore", "rescan", "keep_sent",
        "keep_sent_bytes", "after_send", "shutdown_grace", "on_sent", "on_failed", "hook_timeout", "producers",
    ] + ProfileBuilder.policyKeys + TusSettings.keys + S3Settings.keys + RemoteFileSettings.keys

    /// Families of keys named by the user: `form.NAME` and `header.NAME`.
    static let outboxPrefixes = ["form.", "header."]

    /// Keys whose values are secret: never printed, never echoed in a message.
    static let secretKeys: Set<String> = ["token", "password", "secret_access_key", "session_token"]

    /// Files that hold a secret but have no inline form (an SSH key and its passphrase).
    static let secretOnlyFileKeys: Set<String> = ["private_key_file", "passphrase_file"]

    /// A key naming a file that holds a secret: `KEY_file` of every secret key, and the key files.
    /// Such a path, when relative, is looked up in `$CREDENTIALS_DIRECTORY` first.
    package static func isSecretFile(_ key: String) -> Bool {
        secretOnlyFileKeys.contains(key) || (key.hasSuffix("_file") && secretKeys.contains(String(key.dropLast(5))))
    }

    /// Headers whose values are credentials, shown as `<redacted>` (compared case-insensitively).
    static let sensitiveHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    package static func isSensitiveHeader(_ name: String) -> Bool { sensitiveHeaders.contains(name.lowercased()) }

    static func isKnown(_ key: String, in kind: IniSection.Kind) -> Bool {
        switch kind {
        case .global: return global.contains(key)
        case .outbox: return outbox.contains(key) || outboxPrefixes.contains { key.hasPrefix($0) && key.count > $0.count }
        }
    }

    /// `unknown key "concurency" in [outbox photos]; did you mean "concurrency"?`
    static func unknownKeyMessage(_ key: String, in section: IniSection) -> String {
        var message = "unknown key \(quotedForMessage(key, limit: 64)) in \(section.title)"
        let own = section.kind == .global ? global : outbox
        let other = section.kind == .global ? outbox : global
        if let guess = Suggestion.closest(to: key, among: own) {
            message += "; did you mean \"\(guess)\"?"
        } else if other.contains(key) {
            message += "; it belongs in " + (section.kind == .global ? "an [outbox NAME] section" : "[uploader]")
        } else if section.kind != .global, let dot = key.firstIndex(of: "."),
                  let prefix = Suggestion.closest(to: String(key[...dot]), among: outboxPrefixes) {
            message += "; did you mean \(quotedForMessage(prefix + key[key.index(after: dot)...], limit: 64))?"
        } else if let guess = Suggestion.closest(to: key, among: other) {
            message += "; did you mean \"\(guess)\" (in " + (section.kind == .global ? "an [outbox NAME] section)?" : "[uploader])?")
        }
        return message
    }
}
