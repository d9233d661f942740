import CCurl
import Foundation
import UploaderSupport
import UploaderConfig

/// What one failed libcurl SFTP or FTP(S) request left behind, and its single mapping to a
/// `RemoteFileFailure`: from the CURLcode, the FTP server's last reply and our own callbacks'
/// findings, never from message text.
struct RemoteFileClassifier {
    let target: RemoteFileTarget
    let code: CURLcode
    let detail: String
    let connected: Bool
    let cancelled: Bool
    let stalled: Bool
    let stallTimeout: TimeInterval
    let readError: String?
    let hostKeyRefusal: String?
    /// The FTP server's last reply code (0 for SFTP).
    let serverReply: Int
    let bytesSent: Int64

    var failure: RemoteFileFailure {
        if let readError { return failure(.localRead, readError) }
        if let hostKeyRefusal { return failure(.hostKey, hostKeyRefusal) }
        if cancelled && (code == CURLE_ABORTED_BY_CALLBACK || code == CURLE_READ_ERROR) {
            return failure(.cancelled(connected: connected || bytesSent > 0), "cancelled")
        }
        if stalled && code == CURLE_ABORTED_BY_CALLBACK {
            return failure(.broken, "stalled: no data moved for \(Int(stallTimeout.rounded(.up))) s (stall_timeout)")
        }
        switch code {
        case CURLE_LOGIN_DENIED:
            return failure(.loginRefused, "login refused: \(detail)" + rsaHint)
        case CURLE_REMOTE_DISK_FULL:
            return failure(.full, "server's disk full or quota exceeded: \(detail)")
        case CURLE_REMOTE_ACCESS_DENIED, CURLE_REMOTE_FILE_NOT_FOUND, CURLE_QUOTE_ERROR, CURLE_UPLOAD_FAILED, CURLE_FTP_COULDNT_USE_REST:
            switch serverReply {
            case 452, 552: return failure(.full, "server's disk full or quota exceeded (FTP \(serverReply)): \(detail)")
            case 400...499: return failure(.transient, "FTP \(serverReply): \(detail)")
            default: return failure(.pathRefused, detail)
            }
        case CURLE_USE_SSL_FAILED:
            return failure(.tls, "the server does not offer TLS (AUTH TLS): \(detail); tls = none only if plain FTP is acceptable")
        case CURLE_SSH:
            return failure(.broken, "SFTP: \(detail) (the server failed a request, as it does a write on a full disk or over quota, "
                           + "or the SSH session broke)")
        case CURLE_FTP_ACCEPT_FAILED, CURLE_FTP_WEIRD_PASV_REPLY, CURLE_FTP_CANT_GET_HOST, CURLE_FTP_WEIRD_227_FORMAT,
             CURLE_FTP_PORT_FAILED, CURLE_FTP_ACCEPT_TIMEOUT:
            // An SFTP status libcurl has no code of its own for (a write the server failed, as
            // OpenSSH does on a full disk), or a broken FTP data connection.
            return failure(.broken, detail)
        default:
            break
        }
        switch CurlOutcome(code: code, connected: connected, detail: detail, bytesSent: bytesSent).failure {
        case .unreachable(let message): return failure(.unreachable, message)
        case .broken(let message, _): return failure(.broken, message)
        case .tls(let message): return failure(.tls, message)
        case .localRead(let message): return failure(.localRead, message)
        case .cancelled(_, let connected): return failure(.cancelled(connected: connected), "cancelled")
        case .other(let message): return failure(.other, message)
        }
    }

    private func failure(_ kind: RemoteFileFailure.Kind, _ message: String) -> RemoteFileFailure {
        RemoteFileFailure(kind, message, bytesSent: bytesSent)
    }

    /// libssh2 1.10 signs with an RSA key only as `ssh-rsa` (SHA-1), which OpenSSH 8.8 and later refuse.
    private var rsaHint: String {
        guard target.scheme == .sftp, let key = target.privateKeyFile, Self.isRSA(keyFile: key) else { return "" }
        return " (the key is RSA: this libssh2 signs RSA only with SHA-1 (ssh-rsa), which OpenSSH 8.8 and later refuse; use an ed25519 or ecdsa key)"
    }

    /// Whether a private key file holds an RSA key (PEM `RSA PRIVATE KEY`, or an OpenSSH key naming `ssh-rsa`).
    static func isRSA(keyFile path: String) -> Bool {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
        if text.contains("BEGIN RSA PRIVATE KEY") { return true }
        guard text.contains("BEGIN OPENSSH PRIVATE KEY") else { return false }
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let data = Data(base64Encoded: body) else { return false }
        return data.range(of: Data("ssh-rsa".utf8)) != nil
    }
}
