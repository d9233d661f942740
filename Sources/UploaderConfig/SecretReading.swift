/// Whether a load reads secrets: `run` and `check-config` do; `status`, `enqueue` and `retry`
/// never need one, so a producer or a monitoring user runs them without access to any.
package enum SecretReading: Sendable {
    /// `*_file` secrets are read and `${VAR}` in a secret must be set.
    case read
    /// No secret file is opened and an unset `${VAR}` in a secret is no error: each secret is
    /// left empty (with its `*_file` path kept), never to be sent.
    case skip

    /// Keys whose values are credentials: the secret keys, credential headers and the proxy
    /// URL (it may carry a password).
    static func holdsSecret(_ key: String) -> Bool {
        if ConfigKeys.secretKeys.contains(key) || key == "proxy" { return true }
        let lowered = key.lowercased()
        return lowered.hasPrefix("header.") && ConfigKeys.isSensitiveHeader(String(lowered.dropFirst("header.".count)))
    }
}
