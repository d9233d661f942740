import Foundation
import UploaderSupport
import UploaderConfig

/// Builds the `UploadRequest`s of tus 1.0 (core, creation, termination, checksum): creation
/// POST, HEAD, PATCH, DELETE and the OPTIONS that asks what the server offers. Wire format
/// only; no decisions.
package struct TusRequests: Sendable {
    package static let version = "1.0.0"
    package static let chunkContentType = "application/offset+octet-stream"
    /// Answer headers the protocol reads.
    static let answerHeaders = ["Upload-Offset", "Upload-Length", "Tus-Extension", "Tus-Checksum-Algorithm", "Tus-Version"]

    let profile: Profile

    /// Per-file parts of every request: where creation goes, the profile's headers rendered for
    /// this file, and the transfer controls.
    struct Context: Sendable {
        /// The rendered `url`: the server's creation endpoint.
        var creationURL: String
        /// `User-Agent`, `auth` and `header.*` (see `RequestBuilder.profileHeaders`).
        var profileHeaders: [(name: String, value: String)]
        var rateLimiter: RateLimiter?
        var cancellation: CancellationFlag
        var sourcePath: String?
    }

    /// Creation: `Upload-Length` and `Upload-Metadata`; `Idempotency-Key` lets a server drop a
    /// repeated creation whose answer was lost (the other requests are safe to repeat by design).
    func create(_ c: Context, length: Int64, metadata: [(key: String, value: String)], id: String) -> UploadRequest {
        make(.post, c, url: c.creationURL, headers: [
            ("Upload-Length", String(length)),
            ("Upload-Metadata", Self.metadata(metadata)),
            ("Idempotency-Key", id),
        ])
    }

    func head(_ c: Context, url: String) -> UploadRequest { make(.head, c, url: url, headers: []) }

    /// One chunk from `offset`; `sha256` (of the chunk) gives `Content-Digest` and, when the
    /// server offers it, `Upload-Checksum`.
    func patch(_ c: Context, url: String, offset: Int64, body: RequestBody, sha256: [UInt8]?, checksum: Bool) -> UploadRequest {
        var headers: [(name: String, value: String)] = [("Upload-Offset", String(offset)), ("Content-Type", Self.chunkContentType)]
        if let sha256 {
            headers.append(("Content-Digest", BodyDigest.header(sha256: sha256)))
            if checksum { headers.append(("Upload-Checksum", "sha256 " + Data(sha256).base64EncodedString())) }
        }
        return make(.patch, c, url: url, headers: headers, body: body)
    }

    func terminate(_ c: Context, url: String) -> UploadRequest { make(.delete, c, url: url, headers: []) }

    func options(_ c: Context) -> UploadRequest { make(.options, c, url: c.creationURL, headers: []) }

    /// `Upload-Metadata`: comma-separated `key base64(value)` pairs (tus 1.0, creation).
    static func metadata(_ pairs: [(key: String, value: String)]) -> String {
        pairs.map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())" }.joined(separator: ",")
    }

    private func make(_ method: HTTPMethod, _ c: Context, url: String, headers: [(name: String, value: String)],
                      body: RequestBody = RequestBody([])) -> UploadRequest {
        // Credentials go only where the creation went: an upload URL on another origin (a CDN's
        // upload host) is a capability of its own and gets no Authorization or Cookie of ours.
        let own = RedirectPolicy.mayFollow(from: c.creationURL, to: url)
            ? c.profileHeaders : c.profileHeaders.filter { !ConfigKeys.isSensitiveHeader($0.name) }
        var request = UploadRequest(
            url: url, method: method, headers: [("Tus-Resumable", Self.version)] + headers + own, body: body,
            connectTimeout: profile.connectTimeout, stallTimeout: profile.stallTimeout, timeout: profile.timeout,
            tls: profile.tls, proxy: profile.proxy?.text, rateLimiter: body.length > 0 ? c.rateLimiter : nil, cancellation: c.cancellation,
            sourcePath: c.sourcePath)
        request.keepHeaders = Self.answerHeaders
        return request
    }
}
