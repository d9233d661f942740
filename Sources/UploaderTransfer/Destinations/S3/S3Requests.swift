import Foundation
import UploaderSupport
import UploaderConfig

/// Builds the signed `UploadRequest`s of the S3 operations we use: PutObject, the multipart
/// calls (Create, UploadPart, ListParts, Complete, Abort). Wire format only; no decisions.
package struct S3Requests: Sendable {
    package let target: S3Target
    package let signer: SigV4Signer
    package let profile: Profile
    /// Each request is signed with the time this clock reads.
    package let clock: any Clock

    package init(profile: Profile, target: S3Target, clock: any Clock) {
        self.profile = profile
        self.target = target
        self.clock = clock
        signer = SigV4Signer(accessKeyID: target.accessKeyID, secretAccessKey: target.secretAccessKey.value,
                             sessionToken: target.sessionToken?.value, region: target.region)
    }

    /// Per-file parts of every request: key, the object's headers, and the transfer controls.
    package struct Context: Sendable {
        package var key: [UInt8]
        package var contentType: String
        /// `header.*` values rendered for this file (e.g. `x-amz-meta-site`).
        package var extraHeaders: [(name: String, value: String)]
        package var rateLimiter: RateLimiter?
        package var cancellation: CancellationFlag
        package var sourcePath: String?

        package init(key: [UInt8], contentType: String, extraHeaders: [(name: String, value: String)],
                     rateLimiter: RateLimiter?, cancellation: CancellationFlag, sourcePath: String?) {
            self.key = key
            self.contentType = contentType
            self.extraHeaders = extraHeaders
            self.rateLimiter = rateLimiter
            self.cancellation = cancellation
            self.sourcePath = sourcePath
        }
    }

    /// The object's URL (for the manifest's `remote.url`).
    package func objectURL(_ key: [UInt8]) -> String { target.url(path: target.objectPath(key), query: "") }

    /// PutObject: the whole file. `sha256` (when known) gives the signed payload hash and `x-amz-checksum-sha256`.
    package func putObject(_ c: Context, body: RequestBody, sha256: [UInt8]?) -> UploadRequest {
        var headers = objectHeaders(c)
        if let sha256 {
            // The algorithm header is what AWS SDKs send beside the value; some stores keep the checksum only with it.
            headers.append(("x-amz-sdk-checksum-algorithm", "SHA256"))
            headers.append(("x-amz-checksum-sha256", Data(sha256).base64EncodedString()))
        }
        return make(.put, c, query: [], headers: headers, body: body, payloadHash: sha256?.hexString ?? SigV4Signer.unsignedPayload)
    }

    package func createMultipartUpload(_ c: Context) -> UploadRequest {
        make(.post, c, query: [("uploads", "")], headers: objectHeaders(c), body: RequestBody([]), payloadHash: SigV4Signer.emptyPayloadHash)
    }

    package func uploadPart(_ c: Context, uploadID: String, number: Int, body: RequestBody, sha256: [UInt8]?) -> UploadRequest {
        make(.put, c, query: [("partNumber", String(number)), ("uploadId", uploadID)], headers: [], body: body,
             payloadHash: sha256?.hexString ?? SigV4Signer.unsignedPayload)
    }

    /// ListParts from `marker` (a page of 200, which keeps the answer well inside the 64 KiB the transport keeps).
    package func listParts(_ c: Context, uploadID: String, marker: Int) -> UploadRequest {
        var query = [("uploadId", uploadID), ("max-parts", "200")]
        if marker > 0 { query.append(("part-number-marker", String(marker))) }
        return make(.get, c, query: query, headers: [], body: RequestBody([]), payloadHash: SigV4Signer.emptyPayloadHash)
    }

    package func completeMultipartUpload(_ c: Context, uploadID: String, parts: [S3UploadState.Part]) -> UploadRequest {
        var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for part in parts {
            xml += "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(Self.escapeXML(part.etag))</ETag></Part>"
        }
        xml += "</CompleteMultipartUpload>"
        let bytes = Array(xml.utf8)
        return make(.post, c, query: [("uploadId", uploadID)], headers: [("Content-Type", "application/xml")],
                    body: RequestBody([.bytes(bytes)]), payloadHash: SHA256.hash(bytes).hexString)
    }

    package func abortMultipartUpload(_ c: Context, uploadID: String) -> UploadRequest {
        make(.delete, c, query: [("uploadId", uploadID)], headers: [], body: RequestBody([]), payloadHash: SigV4Signer.emptyPayloadHash)
    }

    /// Content-Type, storage class and the profile's `header.*` values: what the object keeps.
    private func objectHeaders(_ c: Context) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = [("Content-Type", c.contentType)]
        if let storageClass = target.storageClass { headers.append(("x-amz-storage-class", storageClass)) }
        return headers + c.extraHeaders
    }

    /// Signs (every header but User-Agent) and wraps the request for the transport.
    private func make(_ method: HTTPMethod, _ c: Context, query: [(name: String, value: String)],
                      headers: [(name: String, value: String)], body: RequestBody, payloadHash: String) -> UploadRequest {
        let path = target.objectPath(c.key)
        var signed = SigV4Signer.Request(method: method.rawValue, path: path, query: query,
                                         headers: [("Host", target.host)] + headers, payloadHash: payloadHash)
        signer.sign(&signed, date: clock.now)
        return UploadRequest(
            url: target.url(path: path, query: signed.queryString), method: method,
            headers: signed.headers + [("User-Agent", "uploader/\(UploaderVersion.string)")], body: body,
            connectTimeout: profile.connectTimeout, stallTimeout: profile.stallTimeout, timeout: profile.timeout,
            tls: profile.tls, proxy: profile.proxy?.text, rateLimiter: body.length > 0 ? c.rateLimiter : nil, cancellation: c.cancellation,
            sourcePath: c.sourcePath)
    }

    static func escapeXML(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
