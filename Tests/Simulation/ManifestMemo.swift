import Foundation
import Synchronization
import UploaderValues

/// Decoded manifests by their bytes. The simulator reads the whole spool at each check, and
/// most records have not changed since the last one: decoding every one again was most of the
/// end phase's time. A record that does not parse is remembered as nil.
final class ManifestMemo: Sendable {
    /// The bytes of a record, hashed and compared as one block of memory (an array's element-wise
    /// hashing is slow in a debug build).
    private struct Bytes: Hashable, Sendable {
        let bytes: [UInt8]

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }

        static func == (a: Bytes, b: Bytes) -> Bool {
            a.bytes.count == b.bytes.count && a.bytes.withUnsafeBytes { x in
                b.bytes.withUnsafeBytes { y in x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
            }
        }
    }

    /// Past this many distinct records the memo starts again, so a long schedule's memory stays flat.
    private static let limit = 4_096
    private let decoded = Mutex<[Bytes: Manifest?]>([:])

    func manifest(_ bytes: [UInt8]) -> Manifest? {
        let key = Bytes(bytes: bytes)
        if let known = decoded.withLock({ $0[key] }) { return known }
        let manifest = try? Manifest.decode(Data(bytes))
        decoded.withLock { memo in
            if memo.count >= Self.limit { memo.removeAll(keepingCapacity: true) }
            memo[key] = manifest
        }
        return manifest
    }
}
