import Foundation
import UploaderSupport

/// An `sftp://`, `ftps://` or `ftp://` destination (DESIGN §14): where the file goes, how we log
/// in and how the server is recognised. The path is a template rendered per file; bytes go to a
/// temporary name beside the final one and are renamed onto it once complete.
package struct RemoteFileTarget: Sendable {
    package enum Scheme: String, Sendable {
        case sftp, ftps, ftp

        package var defaultPort: Int {
            switch self {
            case .sftp: 22
            case .ftps: 990
            case .ftp: 21
            }
        }
    }

    /// `exists`: what happens when the final name is taken.
    package enum Exists: String, Sendable, CaseIterable {
        /// Replaced (on servers whose rename refuses an existing target, deleted first).
        case overwrite
        /// The file fails (to retry/), the server's file stays.
        case fail
        /// The new file goes under `NAME.1.EXT`, `NAME.2.EXT`, … (the first free one).
        case rename
    }

    /// `tls` for `ftp://`: explicit TLS (AUTH TLS) required, or plain FTP when written `none`.
    package enum FTPTLS: String, Sendable, CaseIterable { case required, none }

    package var scheme: Scheme
    package var user: String
    /// As written in the url (an IPv6 address in brackets).
    package var host: String
    package var port: Int
    /// The path after the authority, placeholders included: absolute for sftp (`/~/` for the
    /// login's home), relative to the login directory for ftp(s) (`%2F` starts an absolute one).
    package var path: Template
    /// `temp_name`: the temporary file's name, in the final name's directory.
    package var tempName: Template
    package var exists: Exists = .overwrite
    package var tls: FTPTLS = .required
    /// `private_key_file` (sftp).
    package var privateKeyFile: String?
    /// `passphrase_file` (sftp): the private key's passphrase.
    package var passphrase: Secret?
    /// `password_file`: the login's password.
    package var password: Secret?
    /// `known_hosts` (sftp): an OpenSSH known_hosts file.
    package var knownHosts: String?
    /// `host_key_sha256` (sftp): the server key's SHA-256, base64 without `SHA256:` and padding.
    package var hostKeySHA256: String?
    /// The url as written, for check-config.
    package var urlText: String

    package static let defaultTempName = ".{name}.part"

    package init(scheme: Scheme, user: String, host: String, port: Int, path: Template, tempName: Template, urlText: String) {
        self.scheme = scheme
        self.user = user
        self.host = host
        self.port = port
        self.path = path
        self.tempName = tempName
        self.urlText = urlText
    }

    /// The host without IPv6 brackets (for a TCP connect).
    package var bareHost: String { host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host }

    /// `[host]:port`, or `host` on the default port: how known_hosts and messages name the server.
    package var knownHostsName: String { port == Scheme.sftp.defaultPort ? bareHost : "[\(bareHost)]:\(port)" }

    /// Secret values, for scrubbing.
    package var secrets: [String] { [passphrase, password].compactMap { $0?.value } }

    /// The files whose change may end a refusal (a new key, a new known_hosts).
    package var credentialFiles: [String] {
        [privateKeyFile, passphrase?.file, password?.file, knownHosts].compactMap { $0 }
    }
}
