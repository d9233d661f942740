import Foundation
import UploaderSupport
import UploaderConfig

/// `Content-Digest` (RFC 9530) values, hashing bodies by streaming over their segments.
package enum BodyDigest {
    /// `sha-256=:<base64>:` for a 32-byte SHA-256.
    package static func header(sha256 digest: [UInt8]) -> String {
        "sha-256=:\(Data(digest).base64EncodedString()):"
    }

    /// SHA-256 of the whole body as it will be sent; file ranges are read with pread, 1 MiB at a time.
    package static func sha256(of body: RequestBody, path: String?) throws -> [UInt8] {
        var hasher = SHA256()
        for segment in body.segments {
            switch segment {
            case .bytes(let bytes):
                hasher.update(bytes)
            case .file(let fd, let offset, let length):
                try hasher.update(readingFrom: fd, offset: offset, length: length, path: path)
            }
        }
        return hasher.finish()
    }
}
