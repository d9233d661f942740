/// What makes a spool directory's new entries durable. Production uses `DirectorySyncer`; the
/// simulator wraps it to check that every call that returns was in fact covered by a fsync.
package protocol DirectorySyncing: Sendable {
    /// Makes the directory holding `name` inside `directory` durable: returns once an fsync of
    /// it that started after this call has ended.
    func syncDirectory(of name: RelativePath, in directory: String) throws
    /// As `syncDirectory`, once in this process's life for each entry.
    func syncOnce(of name: RelativePath, in directory: String) throws
}
