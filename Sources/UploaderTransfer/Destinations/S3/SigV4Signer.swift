import Foundation
import UploaderSupport
import UploaderConfig

/// AWS Signature Version 4 for S3 requests (header-based): canonical request, string to sign,
/// signing key, and the `Authorization` header, over libcrypto's SHA-256 and HMAC.
///
/// S3's flavour: the path is URI-encoded once and never normalised (`//`, `.` kept), and the
/// payload hash is the `x-amz-content-sha256` value (a real hash or `UNSIGNED-PAYLOAD`).
package struct SigV4Signer: Sendable {
    package static let algorithm = "AWS4-HMAC-SHA256"
    package static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// SHA-256 of the empty string, the payload hash of bodiless requests.
    package static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    package let accessKeyID: String
    package let secretAccessKey: String
    package let sessionToken: String?
    package let region: String
    package let service: String

    package init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, region: String, service: String = "s3") {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.region = region
        self.service = service
    }

    /// A request as the signer sees it. `path` is the already encoded request path (sent as is);
    /// `query` holds raw (unencoded) names and values; `headers` are every header to sign.
    package struct Request: Sendable {
        package var method: String
        package var path: String
        package var query: [(name: String, value: String)]
        package var headers: [(name: String, value: String)]
        package var payloadHash: String

        package init(method: String, path: String, query: [(name: String, value: String)] = [],
                     headers: [(name: String, value: String)], payloadHash: String) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.payloadHash = payloadHash
        }

        /// The query as sent on the wire: encoded, sorted, a bare `name` for an empty value (`?uploads`).
        package var queryString: String {
            SigV4Signer.sortedQuery(query).map { $0.value.isEmpty ? $0.name : "\($0.name)=\($0.value)" }.joined(separator: "&")
        }
    }

    /// `20150830T123600Z` for a date.
    package static func amzDate(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(format: "%04d%02d%02dT%02d%02d%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    /// Adds `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token` (when a session token is
    /// set) and `Authorization` to `request.headers`. Every other header in the list is signed.
    package func sign(_ request: inout Request, date: Date) {
        let amzDate = Self.amzDate(date)
        request.headers.removeAll { ["x-amz-date", "x-amz-content-sha256", "x-amz-security-token", "authorization"].contains($0.name.lowercased()) }
        request.headers.append(("x-amz-date", amzDate))
        request.headers.append(("x-amz-content-sha256", request.payloadHash))
        if let sessionToken { request.headers.append(("x-amz-security-token", sessionToken)) }
        request.headers.append(("Authorization", authorization(for: request, amzDate: amzDate)))
    }

    /// The `Authorization` header value for a request whose headers already hold `x-amz-date`.
    package func authorization(for request: Request, amzDate: String) -> String {
        let (canonical, signedHeaders) = canonicalRequest(request)
        let toSign = stringToSign(canonicalRequest: canonical, amzDate: amzDate)
        let signature = SHA256.hmac(key: signingKey(day: String(amzDate.prefix(8))), data: Array(toSign.utf8)).hexString
        return "\(Self.algorithm) Credential=\(accessKeyID)/\(scope(day: String(amzDate.prefix(8)))), "
            + "SignedHeaders=\(signedHeaders), Signature=\(signature)"
    }

    /// The canonical request and its `SignedHeaders` list.
    package func canonicalRequest(_ request: Request) -> (text: String, signedHeaders: String) {
        let query = Self.sortedQuery(request.query).map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        let headers = Self.canonicalHeaders(request.headers)
        let signed = headers.map(\.name).joined(separator: ";")
        let lines = [request.method.uppercased(), request.path, query]
            + headers.map { "\($0.name):\($0.value)" }
            + ["", signed, request.payloadHash]
        return (lines.joined(separator: "\n"), signed)
    }

    package func stringToSign(canonicalRequest: String, amzDate: String) -> String {
        [Self.algorithm, amzDate, scope(day: String(amzDate.prefix(8))),
         SHA256.hash(Array(canonicalRequest.utf8)).hexString].joined(separator: "\n")
    }

    /// `kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), service), "aws4_request")`.
    package func signingKey(day: String) -> [UInt8] {
        var key = SHA256.hmac(key: Array("AWS4\(secretAccessKey)".utf8), data: Array(day.utf8))
        for part in [region, service, "aws4_request"] { key = SHA256.hmac(key: key, data: Array(part.utf8)) }
        return key
    }

    package func scope(day: String) -> String { "\(day)/\(region)/\(service)/aws4_request" }

    /// Lowercased names, values trimmed with inner runs of blanks collapsed, repeated names joined
    /// with `,` in their order, sorted by name.
    static func canonicalHeaders(_ headers: [(name: String, value: String)]) -> [(name: String, value: String)] {
        var merged: [String: String] = [:]
        for header in headers {
            let name = header.name.lowercased()
            let value = collapseBlanks(header.value)
            merged[name] = merged[name].map { "\($0),\(value)" } ?? value
        }
        return merged.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }.map { ($0.key, $0.value) }
    }

    /// Encoded names and values, sorted by name then value (byte order).
    static func sortedQuery(_ query: [(name: String, value: String)]) -> [(name: String, value: String)] {
        query.map { (S3URIEncoding.encode($0.name), S3URIEncoding.encode($0.value)) }.sorted {
            $0.0 == $1.0 ? Array($0.1.utf8).lexicographicallyPrecedes(Array($1.1.utf8))
                         : Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8))
        }.map { (name: $0.0, value: $0.1) }
    }

    private static func collapseBlanks(_ value: String) -> String {
        var out = ""
        var pendingBlank = false
        for scalar in value.unicodeScalars {
            if scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" {
                pendingBlank = !out.isEmpty
            } else {
                if pendingBlank { out.unicodeScalars.append(" ") }
                pendingBlank = false
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
