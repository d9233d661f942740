import UploaderSupport

/// The effective configuration as `check-config` prints it: the same INI form, every key with
/// its value or default, secrets (and credential headers) shown as `<redacted>`.
package func effectiveConfigText(_ c: Configuration) -> String {
    var lines: [String] = ["[uploader]"]
    func put(_ key: String, _ value: String) { lines.append("\(key) = \(iniQuoted(value))") }
    func redacted(_ key: String) { lines.append("\(key) = <redacted>") }
    func duration(_ key: String, _ value: Double) { put(key, ConfigValue.formatDuration(value)) }

    put("log_level", c.global.logLevel.rawValue)
    put("log_format", c.global.logFormat.rawValue)
    put("metrics_file", c.global.metricsFile ?? "")
    put("index", c.global.index ?? "")

    for p in c.profiles {
        lines.append("")
        lines.append("[outbox \(p.name)]")
        put("spool", p.spool.root)
        put("outbox", p.spool.outbox)
        put("sent", p.spool.sent)
        put("retry", p.spool.retry)
        put("producers", p.producers ?? "")
        switch p.destination {
        case .http(let url): put("url", url.description)
        case .s3(let target):
            put("url", target.urlText)
            for (key, value) in target.effectiveEntries { if let value { put(key, value) } else { redacted(key) } }
        case .remoteFile(let target):
            put("url", target.urlText)
            for (key, value) in target.effectiveEntries { if let value { put(key, value) } else { redacted(key) } }
        }
        // sftp and ftp(s) shape no HTTP request and take no `auth` or proxy: those keys are errors there.
        let remoteFile: RemoteFileTarget? = if case .remoteFile(let target) = p.destination { target } else { nil }
        if remoteFile == nil {
            put("protocol", p.uploadProtocol.rawValue)
            if p.uploadProtocol == .tus {
                // tus fixes the method and the body itself: those keys are errors there.
                put("tus_chunk_size", ConfigValue.formatSize(p.tusChunkSize))
            } else {
                put("method", p.method.rawValue)
                put("body", p.body.rawValue)
                put("multipart_field", p.multipartField)
            }
            for field in p.formFields { put("form.\(field.name)", field.value.source) }
            for field in p.headers {
                if ConfigKeys.isSensitiveHeader(field.name) { redacted("header.\(field.name)") }
                else { put("header.\(field.name)", field.value.source) }
            }
            switch p.auth {
            case .none:
                put("auth", "none")
            case .bearer(let token):
                put("auth", "bearer")
                if let file = token.file { put("token_file", file) } else { redacted("token") }
            case .basic(let username, let password):
                put("auth", "basic")
                put("username", username)
                if let file = password.file { put("password_file", file) } else { redacted("password") }
            }
        }
        if remoteFile?.scheme != .sftp {
            put("ca_file", p.tls.caFile ?? "")
            put("client_cert", p.tls.clientCert ?? "")
            put("client_key", p.tls.clientKey ?? "")
            put("insecure_skip_verify", ConfigValue.formatBoolean(p.tls.insecureSkipVerify))
        }
        // Credentials in the proxy's URL are shown as <redacted>; the host and port are not secret.
        if remoteFile == nil { put("proxy", p.proxy?.redacted ?? "") }
        put("concurrency", String(p.concurrency))
        duration("connect_timeout", p.connectTimeout)
        duration("stall_timeout", p.stallTimeout)
        duration("timeout", p.timeout)
        put("max_attempts", String(p.maxAttempts))
        put("digest", p.digest.rawValue)
        duration("backoff", p.backoff)
        duration("max_backoff", p.maxBackoff)
        put("max_rate", p.maxRate.description)
        put("order", p.order.rawValue)
        put("upload_window", p.uploadWindows.description)
        put("interfaces", p.interfaces.joined(separator: " "))
        put("recursive", ConfigValue.formatBoolean(p.recursive))
        put("ignore", p.ignore.joined(separator: " "))
        duration("rescan", p.rescan)
        duration("keep_sent", p.keepSent)
        put("keep_sent_bytes", ConfigValue.formatSize(p.keepSentBytes))
        put("after_send", p.afterSend.rawValue)
        duration("shutdown_grace", p.shutdownGrace)
        put("on_sent", p.onSent ?? "")
        put("on_failed", p.onFailed ?? "")
        duration("hook_timeout", p.hookTimeout)
    }
    return lines.joined(separator: "\n") + "\n"
}

/// A value as the config syntax needs it written to read back the same: quoted (with `\"`,
/// `\\`, `\$` escapes) when it holds a comment character, a quote, a backslash, `${` or edge blanks.
func iniQuoted(_ value: String) -> String {
    let needsQuotes = value.contains("#") || value.contains(";") || value.contains("\"") || value.contains("\\")
        || value.contains("${") || value.hasPrefix(" ") || value.hasPrefix("\t") || value.hasSuffix(" ") || value.hasSuffix("\t")
    guard needsQuotes else { return value }
    var out = "\""
    for scalar in value.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "$": out += "\\$"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
