import Foundation
import UploaderSupport
import UploaderConfig

/// How one upload ended: the answer (or failure) to keep, and what happens to the file.
package typealias UploadOutcome = (result: Result<UploadResponse, TransferFailure>, disposition: Disposition)

/// What happens to a file after one attempt, decided in this one place from the transfer's result.
///
/// The worker acts on the disposition and never inspects statuses or errors itself.
package enum Disposition: Sendable, Equatable {
    /// 2xx: the file is delivered.
    case sent(UploadResponse)
    /// 408, 429, 5xx, or a broken exchange: try again after a backoff (or the server's `Retry-After`).
    case retryLater(reason: String, retryAfter: TimeInterval?)
    /// Any other status (including a 3xx we did not follow), TLS and local errors.
    case permanent(reason: String)
    /// The destination could not be reached at all: pause the profile, spend no attempt.
    case offline(reason: String)
    /// The destination refused our credentials (401, 403, or an S3 code saying so): not the
    /// file's fault. The file stays queued; refusals on several files in a row pause the profile.
    case rejected(reason: String)
    /// The SFTP server's host key is not the one pinned (`known_hosts`, `host_key_sha256`): the file
    /// stays queued and the profile pauses at once (`host_key`); never taken for offline.
    case hostKeyMismatch(reason: String)
    /// Cut short by our own cancellation (shutdown, going offline): not counted toward `max_attempts`.
    /// `connected`: the request reached the destination (keep the attempt, marked interrupted);
    /// false when it was cancelled before connecting (drop the attempt: it is none).
    case interrupted(connected: Bool)

    package var isInterrupted: Bool {
        if case .interrupted = self { return true }
        return false
    }

    package static func decide(_ result: Result<UploadResponse, TransferFailure>, now: Date) -> Disposition {
        switch result {
        case .success(let response):
            let status = response.status
            let reason = HTTPStatus.describe(status, text: response.statusText)
            switch status {
            case 200...299:
                return .sent(response)
            case 500...599 where PlantedBug.serverErrorTakenForSent.isActive:
                return .sent(response)
            case 408, 429, 500...599:
                return .retryLater(reason: reason, retryAfter: response.retryAfter.flatMap { RetryAfter.parse($0, now: now) })
            case 401, 403:
                return .rejected(reason: reason)
            case 300...399:
                let target = response.location.map { " (redirect to \($0) not followed)" } ?? ""
                return .permanent(reason: reason + target)
            default:
                return .permanent(reason: reason)
            }
        case .failure(let failure):
            switch failure {
            case .unreachable(let message): return .offline(reason: message)
            case .broken(let message, _): return .retryLater(reason: message, retryAfter: nil)
            case .tls(let message), .localRead(let message), .other(let message): return .permanent(reason: message)
            case .cancelled(_, let connected): return .interrupted(connected: connected)
            }
        }
    }
}

/// Human text for an HTTP status: `HTTP 503 Service Unavailable`.
package enum HTTPStatus {
    /// Uses the server's reason phrase, or the standard one when it sent none (HTTP/2).
    package static func describe(_ status: Int, text: String) -> String {
        let phrase = text.isEmpty ? standardPhrase(status) : text
        return phrase.isEmpty ? "HTTP \(status)" : "HTTP \(status) \(phrase)"
    }

    package static func standardPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 507: "Insufficient Storage"
        default: ""
        }
    }
}
