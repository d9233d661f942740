import Foundation
import UploaderSupport

/// An S3-compatible destination: bucket, key template, endpoint, credentials and multipart
/// tuning, all checked at config load (DESIGN §5b).
package struct S3Target: Sendable {
    package static let minimumPartSize: Int64 = 5 << 20
    package static let maximumPartSize: Int64 = 5 << 30
    /// S3's limit on the number of parts in one multipart upload.
    package static let maximumParts: Int64 = 10_000

    package var bucket: String
    /// The object key, without a leading `/`; placeholders render to raw bytes (see `S3Target.key`).
    package var key: Template
    package var endpoint: S3Endpoint
    /// Whether `s3_endpoint` was written (else the AWS endpoint for the region is used).
    package var endpointGiven: Bool
    package var region: String
    /// `http://host/bucket/key` (MinIO, Ceph) instead of `https://bucket.host/key` (AWS).
    package var pathStyle: Bool
    package var accessKeyID: String
    package var secretAccessKey: Secret
    package var sessionToken: Secret?
    package var storageClass: String?
    package var multipartThreshold: Int64 = 64 << 20
    package var partSize: Int64 = 16 << 20
    package var partConcurrency: Int = 4

    package init(bucket: String, key: Template, endpoint: S3Endpoint, endpointGiven: Bool, region: String, pathStyle: Bool,
                 accessKeyID: String, secretAccessKey: Secret, sessionToken: Secret? = nil) {
        self.bucket = bucket
        self.key = key
        self.endpoint = endpoint
        self.endpointGiven = endpointGiven
        self.region = region
        self.pathStyle = pathStyle
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// `s3://bucket/key-template`, as written in the config.
    package var urlText: String { "s3://\(bucket)/\(key.source)" }

    /// The AWS endpoint for a region: `https://s3.REGION.amazonaws.com`.
    package static func awsEndpoint(region: String) -> S3Endpoint {
        S3Endpoint(scheme: "https", host: "s3.\(region).amazonaws.com", port: nil)
    }

    /// The object key for one file: literals as written, `{path}`/`{name}` as the file's own
    /// bytes, other placeholders as text. Never percent-encoded here (that is the request's job).
    package func key(_ values: TemplateValues) -> [UInt8] {
        var out: [UInt8] = []
        for part in key.parts {
            switch part {
            case .literal(let text): out += Array(text.utf8)
            case .placeholder(.path): out += values.path.bytes
            case .placeholder(.name): out += values.path.name.bytes
            case .placeholder(let p): out += Array(values.text(p).utf8)
            }
        }
        return out
    }

    /// The part size for a file: the configured one, raised (to whole MiB) so no file needs more than 10,000 parts.
    package func partSize(forFileSize size: Int64) -> Int64 {
        let needed = (size + Self.maximumParts - 1) / Self.maximumParts
        guard needed > partSize else { return partSize }
        let mib: Int64 = 1 << 20
        return (needed + mib - 1) / mib * mib
    }

    /// The `Host` header and TCP peer of requests to this bucket.
    package var host: String { pathStyle ? endpoint.authority : "\(bucket).\(endpoint.authority)" }

    /// The request path of an object: `/bucket/key` (path style) or `/key`, S3-URI-encoded.
    package func objectPath(_ key: [UInt8]) -> String {
        let encoded = S3URIEncoding.encode(key, keepSlash: true)
        return pathStyle ? "/\(S3URIEncoding.encode(Array(bucket.utf8), keepSlash: false))/\(encoded)" : "/\(encoded)"
    }

    /// The full URL for a path and an already canonical query string.
    package func url(path: String, query: String) -> String {
        "\(endpoint.scheme)://\(host)\(path)" + (query.isEmpty ? "" : "?\(query)")
    }

    /// Secrets to scrub from logs.
    package var secrets: [String] { [secretAccessKey.value] + (sessionToken.map { [$0.value] } ?? []) }
}

/// `http(s)://host[:port]` of an S3-compatible service.
package struct S3Endpoint: Sendable, Equatable, CustomStringConvertible {
    package var scheme: String
    /// As written in a URL: an IPv6 address keeps its brackets.
    package var host: String
    package var port: Int?

    package init(scheme: String, host: String, port: Int?) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    package var defaultPort: Int { scheme == "https" ? 443 : 80 }

    /// `host` or `host:port` when the port is not the scheme's default (what curl sends as `Host`).
    package var authority: String {
        guard let port, port != defaultPort else { return host }
        return "\(host):\(port)"
    }

    package var description: String { "\(scheme)://\(authority)" }

    /// Parses `http(s)://host[:port]` (a trailing `/` is allowed, any other path is not); nil when invalid.
    package init?(parsing text: String) {
        guard URLCheck.problem(text) == nil else { return nil }
        let lower = text.lowercased()
        let scheme = lower.hasPrefix("https://") ? "https" : "http"
        var rest = Substring(text.dropFirst(scheme.count + 3))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains("?"), !rest.contains("#"), !rest.contains("{") else { return nil }
        var host = rest
        var port: Int?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[...close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { port = Int(after.dropFirst()) }
        } else if let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
            port = Int(rest[rest.index(after: colon)...])
        }
        self.init(scheme: scheme, host: String(host).lowercased(), port: port)
    }
}

/// S3's URI encoding (SigV4 `UriEncode`): every byte but `A-Z a-z 0-9 - . _ ~` as `%XX`
/// (uppercase hex), and `/` kept in object paths.
package enum S3URIEncoding {
    package static func encode(_ bytes: [UInt8], keepSlash: Bool) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for b in bytes {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(b)
            case UInt8(ascii: "/") where keepSlash:
                out.append(b)
            default:
                out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    package static func encode(_ text: String, keepSlash: Bool = false) -> String {
        encode(Array(text.utf8), keepSlash: keepSlash)
    }
}
