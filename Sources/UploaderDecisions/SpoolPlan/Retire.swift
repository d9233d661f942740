import UploaderValues

/// What became of a delivered file retention chose to delete from sent/ (`SpoolMoves.retire`).
package enum Retirement: Equatable, Sendable {
    /// The file and then its record are gone.
    case deleted
    /// Kept: its `on_sent` hook is still due (its marker is in `.hooks-due/`).
    case hookDue
    /// Kept: not the bytes that were sent (a power cut brought back an older version of a file
    /// its producer rewrote in place and never fsynced), the only copy there is.
    case notWhatWasSent
    /// Kept: the move that filed it is still to be finished (its record is still in the outbox,
    /// naming this place), and the claim that finishes it may be linking these names right now.
    case moveUnfinished
}

/// Retention's deletion of one delivered file, planned over `DiskSteps`.
extension SpoolMoves {
    /// Deletes the file at `file` in sent/ and then its record, unless `Retirement` says why not.
    /// The file's absence is durable before its record goes — also when an earlier pass removed
    /// the file and was killed before that fsync (a deletion to finish) — so whatever a power cut
    /// keeps, a file never stays in sent/ without its record, which no pass would judge again.
    package static func retire<D: DiskSteps>(_ file: RelativePath, naming: StoredAsNaming, on disk: inout D) throws(PlanStop) -> Retirement {
        let place = SpoolPlace(.sent, file)
        if try disk.hookDue(place, hook: "on_sent") { return .hookDue }
        if case .parsed(let record) = disk.readRecord(place) {
            if let facts = try disk.inspect(place), let change = change(facts, from: record) {
                disk.note(PlanNote(.warn, "retention: a file in sent/ is not what was sent; it is kept",
                                   ["file": "sent/" + file.logSafe, "change": change]))
                return .notWhatWasSent
            }
            if case .parsed(let inOutbox) = disk.readRecord(SpoolPlace(.outbox, record.outboxPath)), inOutbox.id == record.id,
               inOutbox.storedAs.flatMap(naming.place) == place {
                return .moveUnfinished
            }
        }
        if try disk.lookUp(place) != nil { try disk.unlink(place) }
        try disk.syncDirectory(of: place)
        try disk.unlink(place.record)
        return .deleted
    }

    /// How a file differs from its record (size, then mtime), or nil.
    static func change(_ facts: FileFacts, from record: Manifest) -> String? {
        if facts.size != record.size { return "size \(record.size) → \(facts.size)" }
        if facts.mtime != record.mtime { return "mtime \(record.mtime) → \(facts.mtime)" }
        return nil
    }
}
