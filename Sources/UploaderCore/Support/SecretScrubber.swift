import Foundation

/// Replaces known secret values with `<redacted>` in text that came from elsewhere (a server's
/// response, its reason phrase) before it is stored in a manifest: a server that echoes the
/// request's `Authorization` header must not get the token written to disk.
package struct SecretScrubber: Sendable {
    package let secrets: [String]

    package init(secrets: [String]) { self.secrets = secrets.filter { !$0.isEmpty } }

    package func scrub(_ text: String) -> String {
        var out = text
        for secret in secrets where out.contains(secret) {
            out = out.replacingOccurrences(of: secret, with: "<redacted>")
        }
        return out
    }

    package func scrub(_ text: String?) -> String? { text.map { scrub($0) } }
}

extension UploadResponse {
    /// This response with every server-supplied text scrubbed of `scrubber`'s secrets.
    package func scrubbed(_ scrubber: SecretScrubber) -> UploadResponse {
        var copy = self
        copy.statusText = scrubber.scrub(statusText)
        copy.etag = scrubber.scrub(etag)
        copy.location = scrubber.scrub(location)
        copy.body = scrubber.scrub(body)
        return copy
    }
}

extension Profile {
    /// Scrubs this profile's secrets, and the Basic credentials as they travel (base64), from server text.
    package var secretScrubber: SecretScrubber {
        var secrets = secretValues
        if case .basic(let username, let password) = auth {
            secrets.append(Data("\(username):\(password.value)".utf8).base64EncodedString())
        }
        return SecretScrubber(secrets: secrets)
    }
}
