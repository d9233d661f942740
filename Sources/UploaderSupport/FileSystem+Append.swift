@preconcurrency import Glibc
import Foundation

/// Appending to a log-like file: the sent ledger's one write per batch of deliveries.
extension FileSystem {
    /// Appends `data` to `directory/name` (created, mode 0640, when missing) with one write(2)
    /// under O_APPEND, and no fsync: what needs an append is a statistic, not a record.
    /// Never follows a symlink at `name`.
    package static func append(_ data: [UInt8], to name: RelativePath, in directory: String) throws {
        let display = name.displayed(in: directory)
        let fd = try FileDescriptor.open(name, in: directory, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode: 0o640)
        try data.withUnsafeBytes { try writeAll($0, to: fd.rawValue, path: display) }
    }
}
