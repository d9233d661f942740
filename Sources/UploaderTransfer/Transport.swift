import Foundation
import UploaderSupport
import UploaderConfig

/// Everything a transport needs to send one upload: URL, method, headers, and a streamed body.
///
/// Built by `RequestBuilder` from a profile and an `UploadSource`; the transport never looks
/// at the spool or the config.
package struct UploadRequest: Sendable {
    package var url: String
    package var method: HTTPMethod
    /// Complete header lines' names and values, in order (Content-Type, Idempotency-Key, …).
    package var headers: [(name: String, value: String)]
    package var body: RequestBody
    package var connectTimeout: TimeInterval
    /// Abort when no byte moved for this long (0 = never).
    package var stallTimeout: TimeInterval
    /// Whole-request limit (0 = none).
    package var timeout: TimeInterval
    package var tls: TLSOptions
    /// The `proxy` key's URL (`CURLOPT_PROXY`); nil leaves libcurl to its environment variables.
    package var proxy: String?
    /// Shared per-profile byte budget, or nil for no cap.
    package var rateLimiter: RateLimiter?
    /// Set from another thread to abort the transfer (shutdown, profile going offline).
    package var cancellation: CancellationFlag
    /// Called now and then with the bytes sent so far (for progress logs).
    package var progress: (@Sendable (Int64) -> Void)?
    /// The file the body reads from, for error messages (`read outbox/a.txt: …`).
    package var sourcePath: String?
    /// Response headers to keep in `UploadResponse.headers` beyond the ones every answer keeps
    /// (tus's `Upload-Offset`, …); names compared without case.
    package var keepHeaders: [String] = []

    package init(url: String, method: HTTPMethod, headers: [(name: String, value: String)], body: RequestBody,
                 connectTimeout: TimeInterval, stallTimeout: TimeInterval, timeout: TimeInterval,
                 tls: TLSOptions, proxy: String?, rateLimiter: RateLimiter? = nil, cancellation: CancellationFlag = CancellationFlag(),
                 progress: (@Sendable (Int64) -> Void)? = nil, sourcePath: String? = nil) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.connectTimeout = connectTimeout
        self.stallTimeout = stallTimeout
        self.timeout = timeout
        self.tls = tls
        self.proxy = proxy
        self.rateLimiter = rateLimiter
        self.cancellation = cancellation
        self.progress = progress
        self.sourcePath = sourcePath
    }
}

/// A request body as a sequence of in-memory bytes and byte ranges of an open file.
///
/// The file is read from its descriptor as curl asks for data, so memory stays flat
/// whatever the file's size; `length` is known up front for `Content-Length`.
package struct RequestBody: Sendable {
    package enum Segment: Sendable {
        case bytes([UInt8])
        /// `length` bytes of the open descriptor `fd`, from `offset` (read with pread).
        case file(fd: Int32, offset: Int64, length: Int64)

        package var length: Int64 {
            switch self {
            case .bytes(let b): return Int64(b.count)
            case .file(_, _, let length): return length
            }
        }
    }

    package var segments: [Segment]

    package init(_ segments: [Segment]) { self.segments = segments }

    package var length: Int64 { segments.reduce(0) { $0 + $1.length } }
}

/// What came back from a request that got an HTTP answer (any status).
package struct UploadResponse: Sendable, Equatable {
    package var status: Int
    package var statusText: String
    package var etag: String?
    package var location: String?
    /// Raw `Retry-After` header value, if any.
    package var retryAfter: String?
    /// The headers the request named in `keepHeaders` that came back, by lowercased name.
    package var headers: [String: String]
    /// First 64 KiB of the body, as text (lossy).
    package var body: String
    package var bytesSent: Int64
    package var effectiveURL: String

    package init(status: Int, statusText: String = "", etag: String? = nil, location: String? = nil,
                 retryAfter: String? = nil, headers: [String: String] = [:], body: String = "", bytesSent: Int64 = 0,
                effectiveURL: String = "") {
        self.status = status
        self.statusText = statusText
        self.etag = etag
        self.location = location
        self.retryAfter = retryAfter
        self.headers = headers
        self.body = body
        self.bytesSent = bytesSent
        self.effectiveURL = effectiveURL
    }
}

/// Why a request got no HTTP answer, sorted by what happens next (see `Disposition`).
package enum TransferFailure: Error, Sendable, Equatable {
    /// Never connected: name resolution, refused, connect timeout, no route. Not an attempt.
    case unreachable(String)
    /// Connected, then the exchange broke (reset, stall, timeout). Retryable attempt.
    case broken(String, bytesSent: Int64)
    /// TLS handshake or certificate rejected. Permanent.
    case tls(String)
    /// Our own file could not be read. Permanent.
    case localRead(String)
    /// Aborted through `CancellationFlag` (shutdown or offline). Not counted toward `max_attempts`;
    /// `connected` says whether the request reached the destination (an attempt to keep, marked
    /// interrupted) or was cut before it connected (no attempt at all, DESIGN §1).
    case cancelled(bytesSent: Int64, connected: Bool)
    /// Anything else libcurl reports (bad URL, out of memory). Permanent.
    case other(String)
}

extension TransferFailure {
    /// The failure's text, for logs and `status`.
    package var message: String {
        switch self {
        case .unreachable(let m), .broken(let m, _), .tls(let m), .localRead(let m), .other(let m): return m
        case .cancelled: return "cancelled"
        }
    }
}

/// Sends one request and waits for its answer. Blocks the calling thread.
///
/// Implementations keep their own connections alive between calls on the same instance,
/// so a worker thread owns one transport and reuses it.
package protocol Transport: AnyObject {
    func send(_ request: UploadRequest) -> Result<UploadResponse, TransferFailure>
}
