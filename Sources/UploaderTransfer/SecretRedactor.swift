import Foundation
import UploaderSupport
import UploaderConfig

/// Replaces a profile's secrets with `<redacted>` in what came back from the server.
///
/// Servers echo credentials (a 401 body quoting the token, a cookie in a redirect), and
/// the answer goes into the manifest and the log; no secret may reach either.
package struct SecretRedactor: Sendable {
    private let secrets: [String]

    /// Longest first, so a secret that contains another is replaced whole.
    package init(secrets: [String]) {
        self.secrets = Set(secrets.filter { !$0.isEmpty }).sorted { $0.count > $1.count }
    }

    package func redact(_ text: String) -> String {
        var text = text
        for secret in secrets where text.contains(secret) {
            text = text.replacingOccurrences(of: secret, with: "<redacted>")
        }
        return text
    }

    package func redact(_ text: String?) -> String? { text.map { redact($0) } }

    /// The answer or failure with every text from the wire redacted.
    package func redact(_ result: Result<UploadResponse, TransferFailure>) -> Result<UploadResponse, TransferFailure> {
        guard !secrets.isEmpty else { return result }
        switch result {
        case .success(var response):
            response.statusText = redact(response.statusText)
            response.etag = redact(response.etag)
            response.location = redact(response.location)
            response.retryAfter = redact(response.retryAfter)
            response.body = redact(response.body)
            response.effectiveURL = redact(response.effectiveURL)
            return .success(response)
        case .failure(let failure):
            switch failure {
            case .unreachable(let message): return .failure(.unreachable(redact(message)))
            case .broken(let message, let bytes): return .failure(.broken(redact(message), bytesSent: bytes))
            case .tls(let message): return .failure(.tls(redact(message)))
            case .localRead(let message): return .failure(.localRead(redact(message)))
            case .other(let message): return .failure(.other(redact(message)))
            case .cancelled: return result
            }
        }
    }
}
