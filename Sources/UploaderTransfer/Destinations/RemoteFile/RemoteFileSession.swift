import Foundation
import UploaderSupport
import UploaderConfig

/// The remote file operations publishing a file takes (DESIGN §14), the seam between the
/// publish sequence (`RemoteFilePublish`) and a server: libcurl's SFTP and FTP(S) in
/// production (`CurlRemoteFileSession`), a model in the simulator. Paths are the server's
/// (decoded, not percent-encoded). Each call blocks; one session serves one thread at a time.
package protocol RemoteFileSession: AnyObject {
    /// The size of the file at `path`, nil when there is none.
    func size(of path: String, _ controls: RemoteFileControls) -> Result<Int64?, RemoteFileFailure>
    /// Writes `source`'s bytes to `path`, making missing directories: the whole file (replacing
    /// what is there), or with `append` only the bytes past what the server holds already.
    /// Answers with the bytes sent.
    func upload(_ source: UploadSource, to path: String, append: Bool, _ controls: RemoteFileControls) -> Result<Int64, RemoteFileFailure>
    /// Renames `from` onto `to`, as the server's rename does (SFTP on OpenSSH refuses an
    /// existing `to`; FTP's RNFR/RNTO on most servers replaces it).
    func rename(_ from: String, to: String, _ controls: RemoteFileControls) -> Result<Void, RemoteFileFailure>
    func delete(_ path: String, _ controls: RemoteFileControls) -> Result<Void, RemoteFileFailure>
}

/// What one attempt lends every operation: limits, the rate budget, cancellation and progress
/// (from the `UploadRequest` the runner built).
package struct RemoteFileControls: Sendable {
    package var connectTimeout: TimeInterval
    package var stallTimeout: TimeInterval
    package var timeout: TimeInterval
    package var tls: TLSOptions
    package var rateLimiter: RateLimiter?
    package var cancellation: CancellationFlag
    package var progress: (@Sendable (Int64) -> Void)?
    package var sourcePath: String?
    /// The manifest id of the file the attempt sends.
    package var uploadID = ""

    package init(_ request: UploadRequest) {
        connectTimeout = request.connectTimeout
        stallTimeout = request.stallTimeout
        timeout = request.timeout
        tls = request.tls
        rateLimiter = request.rateLimiter
        cancellation = request.cancellation
        progress = request.progress
        sourcePath = request.sourcePath
    }
}

/// Why a remote file operation failed, sorted by what happens next (`disposition`).
package struct RemoteFileFailure: Error, Sendable, Equatable {
    package enum Kind: Sendable, Equatable {
        /// Never connected: not an attempt.
        case unreachable
        /// The server's host key is not the one pinned.
        case hostKey
        /// The server refused our login (key, password).
        case loginRefused
        /// The server refused this operation on this path: permission denied, no such directory.
        case pathRefused
        /// Quota exceeded or disk full on the server.
        case full
        /// The server answered a transient refusal (an FTP 4xx): try again later.
        case transient
        /// Connected, then the exchange broke (reset, stall, timeout, an SFTP write failure).
        case broken
        /// A TLS handshake or certificate failed.
        case tls
        /// Our own file could not be read.
        case localRead
        /// Cut by our own cancellation.
        case cancelled(connected: Bool)
        case other
    }

    package var kind: Kind
    package var message: String
    package var bytesSent: Int64

    package init(_ kind: Kind, _ message: String, bytesSent: Int64 = 0) {
        self.kind = kind
        self.message = message
        self.bytesSent = bytesSent
    }
}
