import Foundation
import UploaderSupport
import UploaderConfig

/// A file's upload id (sent as `Idempotency-Key`), derived from what identifies this very
/// file: profile, path, device, inode, size, mtime and its SHA-256 — or, when it is not
/// hashed (`digest = none`), its ctime instead.
///
/// Because the same file always gets the same id, the id need not be durable before the
/// first request: if a power cut loses the claim's manifest, the file is claimed again
/// under the same id, and a server that already has it can drop the repeat. A file that
/// is rewritten or replaced changes its hash (or inode), and so gets a new id. The ctime
/// stays out when the content is hashed: our own moves (links into retry/ and back) change
/// it, and a power cut can bring an older one back, which would give the same bytes a new
/// key after the record of their upload was lost. Unhashed, it is
/// what tells a rewrite that kept size and mtime.
package enum ManifestID {
    package static func derive(profile: String, path: RelativePath, status: FileSystem.Status, sha256: String?) -> String {
        var input = Array("uploader-id-\(sha256 == nil ? "v1" : "v2")\u{0}\(profile)\u{0}".utf8)
        input += path.bytes
        let identity = sha256.map { "\(status.device):\(status.inode):\(status.size):\(status.mtimeNanos):\($0)" }
            ?? "\(status.device):\(status.inode):\(status.size):\(status.mtimeNanos):\(status.ctimeNanos):-"
        input += Array("\u{0}\(identity)".utf8)
        var bytes = Array(SHA256.hash(input).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80  // version 8: a custom, name-derived UUID (RFC 9562)
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        let hex = bytes.hexString
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }

    /// A random id, for a file that cannot be read (no request will be made for it).
    package static func random() -> String { UUID().uuidString.lowercased() }
}
