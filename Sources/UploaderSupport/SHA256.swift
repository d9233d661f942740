import COpenSSL
import Foundation

/// Incremental SHA-256 over OpenSSL's EVP interface (libcrypto), never a hand-written hash.
package struct SHA256: ~Copyable {
    private let context: OpaquePointer

    package init() {
        guard let ctx = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed: out of memory") }
        precondition(EVP_DigestInit_ex(ctx, EVP_sha256(), nil) == 1, "EVP_DigestInit_ex(sha256) failed")
        context = ctx
    }

    deinit { EVP_MD_CTX_free(context) }

    package mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard buffer.count > 0 else { return }
        precondition(EVP_DigestUpdate(context, buffer.baseAddress, buffer.count) == 1)
    }

    package mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The 32-byte digest; the hasher is finished after this.
    package consuming func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        precondition(EVP_DigestFinal_ex(context, &digest, &length) == 1 && length == 32)
        return digest
    }

    package static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var h = SHA256()
        h.update(bytes)
        return h.finish()
    }

    /// Hashes `length` bytes of `fd` from `offset` with pread, 1 MiB at a time.
    /// With `cancellation`, checks it before each chunk and throws `CancellationFlag.Cancelled`
    /// once it is set, so a shutdown never waits for a hash of many GiB to finish.
    package static func hash(fd: Int32, offset: Int64 = 0, length: Int64, path: String?,
                             cancellation: CancellationFlag? = nil) throws -> [UInt8] {
        var h = SHA256()
        try h.update(readingFrom: fd, offset: offset, length: length, path: path, cancellation: cancellation)
        return h.finish()
    }

    /// Adds `length` bytes of `fd` from `offset` (pread, 1 MiB at a time); a file shorter
    /// than expected is an I/O error naming `path`.
    package mutating func update(readingFrom fd: Int32, offset: Int64, length: Int64, path: String?,
                                 cancellation: CancellationFlag? = nil) throws {
        try update(length: length, path: path, cancellation: cancellation) { buffer, at in
            try FileSystem.read(fd: fd, into: buffer, at: offset + at, path: path)
        }
    }

    /// Adds `length` bytes that `read(buffer, offset)` delivers (the number read, 0 at the end),
    /// 1 MiB at a time: the same loop for a real descriptor and a simulated one.
    package mutating func update(length: Int64, path: String?, cancellation: CancellationFlag? = nil,
                                 read: (UnsafeMutableRawBufferPointer, Int64) throws -> Int) throws {
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var done: Int64 = 0
        while done < length {
            if let cancellation, cancellation.isCancelled { throw CancellationFlag.Cancelled() }
            let want = Int(min(Int64(chunk), length - done))
            let n = try read(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), done)
            if n == 0 { throw SystemError("read", path: path, code: .io) }
            update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            done += Int64(n)
        }
    }

    /// HMAC-SHA256 (libcrypto), for request signing.
    package static func hmac(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = key.withUnsafeBytes { k in
            data.withUnsafeBytes { d in
                HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), d.bindMemory(to: UInt8.self).baseAddress, d.count, &out, &length)
            }
        }
        return out
    }
}

extension Array where Element == UInt8 {
    package var hexString: String {
        let hex = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for b in self {
            out.append(hex[Int(b >> 4)])
            out.append(hex[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes lowercase or uppercase hex; nil if malformed.
    package init?(hex: String) {
        let chars = Array(hex.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = nibble(chars[i]), let lo = nibble(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        self = out
    }
}
