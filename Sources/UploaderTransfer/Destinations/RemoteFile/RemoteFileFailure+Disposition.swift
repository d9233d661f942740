import Foundation
import UploaderSupport

/// The single mapping of a failed remote file operation to what becomes of the file (DESIGN
/// §14): a refused login pauses as `rejected`, a host key that does not match as `host_key`, a
/// refusal about this path fails the file, a full disk, a cut or a timeout is tried again on the
/// profile's own backoff: neither SFTP nor FTP has a way to say when to come back.
extension RemoteFileFailure {
    package var disposition: Disposition {
        switch kind {
        case .unreachable: .offline(reason: message)
        case .hostKey: .hostKeyMismatch(reason: message)
        case .loginRefused: .rejected(reason: message)
        case .pathRefused, .tls, .localRead, .other: .permanent(reason: message)
        case .full, .transient, .broken: .retryLater(reason: message, retryAfter: nil)
        case .cancelled(let connected): .interrupted(connected: connected)
        }
    }

    /// The same failure as the transfer layer's result type (what the manifest's attempt keeps).
    package var transferFailure: TransferFailure {
        switch kind {
        case .unreachable: .unreachable(message)
        case .tls: .tls(message)
        case .localRead: .localRead(message)
        case .cancelled(let connected): .cancelled(bytesSent: bytesSent, connected: connected)
        case .full, .transient, .broken: .broken(message, bytesSent: bytesSent)
        case .hostKey, .loginRefused, .pathRefused, .other: .other(message)
        }
    }
}
