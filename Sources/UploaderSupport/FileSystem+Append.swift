/// Appending to a log-like file: the sent ledger's one write per batch of deliveries.
extension FileSystem {
    /// Appends `data` to `directory/name` (created, mode 0640, when missing) under O_APPEND, and
    /// no fsync: what needs an append is a statistic, not a record. Never follows a symlink at `name`.
    package static func append(_ data: [UInt8], to name: RelativePath, in directory: String) throws {
        try kernel.append(data, to: name, in: directory)
    }
}
