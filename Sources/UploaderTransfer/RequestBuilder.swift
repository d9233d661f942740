import Foundation
import UploaderSupport
import UploaderConfig

/// Why a request could not be built; always a permanent failure for the file.
package enum RequestBuildError: Error, Sendable, Equatable, CustomStringConvertible {
    case tooLargeForJSON(size: Int64)
    case unreadable(SystemError)

    package var description: String {
        switch self {
        case .tooLargeForJSON(let size):
            return "body = json supports files up to 16 MiB; this file is \(size) bytes"
        case .unreadable(let error):
            return error.description
        }
    }
}

/// Turns a profile and the file to send into the `UploadRequest` a transport sends.
///
/// All wire-format decisions (§5 of the design) live here: URL, headers, digest and body
/// encoding; the transport only moves bytes.
package struct RequestBuilder: Sendable {
    /// Headers `header.*` may not set: they describe the framing, which is ours.
    static let reservedHeaders: Set<String> = ["content-length", "transfer-encoding", "expect", "host"]

    package let profile: Profile

    package init(profile: Profile) { self.profile = profile }

    /// The request for `source` (its descriptor must stay open until the request is sent);
    /// the body's length is the size at claim time.
    package func request(for source: UploadSource, values: TemplateValues,
                         rateLimiter: RateLimiter?, cancellation: CancellationFlag) throws -> UploadRequest {
        let fd = source.fd, size = source.size, path = source.path
        let sourcePath = path.logSafe
        let url = DestinationAddress.url(of: profile, values: values)
        let fields = profile.formFields.map { (name: $0.name, value: $0.value.renderText(values)) }
        let displayName = path.name.display

        let body: RequestBody
        let contentType: String
        var digest: [UInt8]?
        do {
            switch profile.body {
            case .raw:
                body = RequestBody([.file(fd: fd, offset: 0, length: size)])
                contentType = source.contentType
                if profile.digest == .sha256 {
                    if let known = source.sha256.flatMap({ [UInt8](hex: $0) }), known.count == 32 {
                        digest = known
                    } else {
                        digest = try SHA256.hash(fd: fd, length: size, path: sourcePath)
                    }
                }
            case .multipart:
                let multipart = MultipartBody(fields: fields, fileField: profile.multipartField, fileName: displayName,
                                              fileContentType: source.contentType, fd: fd, size: size)
                body = multipart.body
                contentType = multipart.contentType
                if profile.digest == .sha256 { digest = try BodyDigest.sha256(of: body, path: sourcePath) }
            case .json:
                let bytes = try JSONBody.encode(fields: fields, name: displayName, fd: fd, size: size,
                                                sha256: source.sha256, path: sourcePath)
                body = RequestBody([.bytes(bytes)])
                contentType = "application/json"
                if profile.digest == .sha256 { digest = SHA256.hash(bytes) }
            }
        } catch let error as SystemError {
            throw RequestBuildError.unreadable(error)
        }

        var headers: [(name: String, value: String)] = [
            ("Content-Type", contentType),
            ("Idempotency-Key", source.id),
        ]
        if let digest { headers.append(("Content-Digest", BodyDigest.header(sha256: digest))) }

        return UploadRequest(
            url: url, method: profile.method, headers: withProfileHeaders(headers, values: values), body: body,
            connectTimeout: profile.connectTimeout, stallTimeout: profile.stallTimeout, timeout: profile.timeout,
            tls: profile.tls, proxy: profile.proxy?.text, rateLimiter: rateLimiter, cancellation: cancellation, sourcePath: sourcePath)
    }

    /// `headers`, then `User-Agent`, the `auth` header and the `header.*` values rendered for this
    /// file; a `header.*` replaces an earlier header of its name. What every request of a file carries.
    package func withProfileHeaders(_ headers: [(name: String, value: String)], values: TemplateValues) -> [(name: String, value: String)] {
        var headers = headers
        headers.append(("User-Agent", "uploader/\(UploaderVersion.string)"))
        switch profile.auth {
        case .none: break
        case .basic(let username, let password):
            let credentials = Data("\(username):\(password.value)".utf8).base64EncodedString()
            headers.append(("Authorization", "Basic \(credentials)"))
        case .bearer(let token):
            headers.append(("Authorization", "Bearer \(token.value)"))
        }
        for field in profile.headers where !RequestBuilder.reservedHeaders.contains(field.name.lowercased()) {
            headers.removeAll { $0.name.lowercased() == field.name.lowercased() }
            // renderText cleans inserted values; a line break in the template's own text must not split the header either.
            headers.append((field.name, MultipartBody.headerSafe(field.value.renderText(values))))
        }
        return headers
    }
}
