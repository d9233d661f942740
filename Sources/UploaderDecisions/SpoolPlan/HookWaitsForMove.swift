import UploaderValues

/// Whether a due hook waits for the move that filed its file, planned over `DiskSteps`: a run
/// rewrites the manifest in sent/ or retry/, which an unfinished move is still to link.
extension SpoolMoves {
    /// The move that filed the file at `filed` is not finished: its record is still in the outbox
    /// (read as `manifest.outboxPath`'s), naming `filed` (`stored_as`), and the outbox name still
    /// leads to this file, or to none, or cannot be looked at. When it leads to another file — the
    /// producer's new one, put there after this file's link — this file's move is done but for
    /// that record, which the new file's claim replaces: the hook runs. A record that cannot be
    /// read counts as none.
    package static func moveUnfinished<D: DiskSteps>(filedAt filed: SpoolPlace, manifest: Manifest, naming: StoredAsNaming,
                                                     on disk: inout D) -> Bool {
        let outbox = SpoolPlace(.outbox, manifest.outboxPath)
        guard case .parsed(let record) = disk.readRecord(outbox), let stored = record.storedAs.flatMap(naming.place),
              stored == filed else { return false }
        do throws(PlanStop) {
            // A name that is gone, or cannot be looked at, counts as this file's: the hook waits.
            guard let inOutbox = try disk.lookUp(outbox), let there = try disk.lookUp(filed) else { return true }
            return inOutbox == there
        } catch {
            return true
        }
    }
}
