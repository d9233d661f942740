@preconcurrency import Glibc
import Foundation

/// `Content-Digest` (RFC 9530) values, hashing bodies by streaming over their segments.
package enum BodyDigest {
    /// `sha-256=:<base64>:` for a 32-byte SHA-256.
    package static func header(sha256 digest: [UInt8]) -> String {
        "sha-256=:\(Data(digest).base64EncodedString()):"
    }

    /// SHA-256 of the whole body as it will be sent; file ranges are read with pread, 1 MiB at a time.
    package static func sha256(of body: RequestBody, path: String?) throws -> [UInt8] {
        var hasher = SHA256()
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        for segment in body.segments {
            switch segment {
            case .bytes(let bytes):
                hasher.update(bytes)
            case .file(let fd, let offset, let length):
                var done: Int64 = 0
                while done < length {
                    let want = Int(min(Int64(chunk), length - done))
                    let n = try retryingEINTR("read", path: path) { pread(fd, buffer.baseAddress, want, off_t(offset + done)) }
                    if n == 0 { throw SystemError("read", path: path, code: EIO) }
                    hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                    done += Int64(n)
                }
            }
        }
        return hasher.finish()
    }
}
