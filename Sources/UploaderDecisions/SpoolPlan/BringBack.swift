import UploaderValues

/// Where `requeueIfChangedAfterUpload` put a changed file back in the outbox.
package enum Requeued: Equatable, Sendable {
    /// Under its own name, with its record rewritten as `queued`.
    case underItsName
    /// Under this free name, without a record (a new file had taken its own); the new file
    /// under its name has no record either.
    case beside(RelativePath)
}

/// Files coming back to the outbox from sent/ or retry/ outside the move back: a file changed
/// during its move, or written to after its upload, and the second names a cut move leaves.
extension SpoolMoves {
    /// Gives the file at `place` its outbox name `file` back, durably, then takes the old names
    /// away — the file's, then its record's when it is the very record the outbox holds — as the
    /// move back would have (one cut after its manifest reached the outbox).
    package static func bringBack<D: DiskSteps>(_ place: SpoolPlace, to file: RelativePath, on disk: inout D) throws(PlanStop) {
        let outboxFile = SpoolPlace(.outbox, file)
        try disk.link(place, to: outboxFile)
        try disk.syncDirectory(of: outboxFile)
        try disk.unlink(place)
        // The file's name there goes durably before its record's: without a journal a power cut
        // could otherwise keep the record's removal and not the file's, and leave it there alone.
        try disk.syncDirectory(of: place)
        if try disk.sameFile(outboxFile.record, place.record) {
            try disk.unlink(place.record)
            try disk.syncDirectory(of: place)
        }
    }

    /// A live move whose file changed between the last check and its move (it has its new name
    /// at `target` already): the file goes back first, its record's new name after it, so the file
    /// is never left in sent/ or retry/ without its record. The producer may have dropped a new
    /// file under the name meanwhile: the changed one then comes back beside it, under a free
    /// name and without a record (a file of its own). Always ends in `changedDuringMove`.
    package static func bringBackChanged<D: DiskSteps>(_ path: RelativePath, id: String, from target: SpoolPlace, change: String,
                                                       on disk: inout D) throws(PlanStop) -> Never {
        func comeBackBeside(_ disk: inout D) throws(PlanStop) -> Never {
            let beside = try besideName(path, bringingBack: target, on: &disk)
            try linkBeside(target, as: beside, on: &disk)
            // The file's name there goes durably before its record's (see `bringBack`).
            try disk.unlink(target)
            try disk.syncDirectory(of: target)
            try disk.unlink(target.record)
            try disk.syncDirectory(of: target)
            throw .changedDuringMove(change, broughtBackAs: beside)
        }
        // Looked at first (the link's own refusal of a taken name needs one more lstat to tell it
        // from a name that already leads to this file); a name taken since is refused by the link.
        if disk.exists(SpoolPlace(.outbox, path)) { try comeBackBeside(&disk) }
        do throws(PlanStop) {
            try bringBack(target, to: path, on: &disk)
        } catch .refused(.exists) {
            try comeBackBeside(&disk)
        }
        // This move's record left in `target`'s area by `bringBack` when a rescan had already
        // dropped its outbox name: the file has left the area, so the record goes too.
        if case .parsed(let there) = disk.readRecord(target), there.id == id {
            try disk.unlink(target.record)
            try disk.syncDirectory(of: target)
        }
        throw .changedDuringMove(change, broughtBackAs: nil)
    }

    /// Gives the file at `place` the free outbox name `beside` (no record there), durably. When the
    /// outbox's fsync fails, the name is taken away again, durably: the file still has its name at
    /// `place`, where the record files it, and a name the running daemon could claim meanwhile (or
    /// a power cut keep) would have it in two places and sent twice.
    static func linkBeside<D: DiskSteps>(_ place: SpoolPlace, as beside: RelativePath, on disk: inout D) throws(PlanStop) {
        let besidePlace = SpoolPlace(.outbox, beside)
        try disk.link(place, to: besidePlace)
        if let refusal = disk.attempt(.syncDirectory(besidePlace, moves: [0])) {
            // Its absence made durable too: a cut must not keep the link the failed fsync left.
            if disk.attempt(.unlink(besidePlace, move: 0)) != nil || disk.attempt(.syncDirectory(besidePlace, moves: [0])) != nil {
                disk.note(PlanNote(.error, "cannot take back a name given in the outbox; the file may be sent twice",
                                   ["file": beside.logSafe], withError: true))
            }
            throw .refused(refusal)
        }
    }

    /// Whether the record at `target` is this file's own (`manifest`, recorded in the outbox at
    /// `file`): a second name of the outbox record, or a record with its id. Absent or not a
    /// manifest is not; one that cannot be read stops the plan.
    package static func holdsOwnRecord<D: DiskSteps>(_ file: RelativePath, manifest: Manifest, at target: SpoolPlace,
                                                     on disk: inout D) throws(PlanStop) -> Bool {
        if try disk.sameFile(SpoolPlace(.outbox, file).record, target.record) { return true }
        switch disk.readRecord(target) {
        case .parsed(let there): return there.id == manifest.id
        case .missing, .corrupt: return false
        case .unreadable: throw .refused(.other)
        }
    }

    /// Removes the names at `stored` that are second names of the file at `path` in the outbox and
    /// of its record, as a move cut after its links leaves them, and makes their absence durable,
    /// also when they were already gone (an earlier process may have removed them and died before
    /// the fsync; without a journal a power cut would bring them back once the record, the one
    /// thing saying they go, is gone). A name there that leads to another file is left alone, and
    /// so is the record beside it: that file is the version this record moved.
    package static func dropSecondNames<D: DiskSteps>(of path: RelativePath, at stored: SpoolPlace, on disk: inout D) throws(PlanStop) {
        guard stored.area != .outbox else { return }
        let outboxFile = SpoolPlace(.outbox, path)
        let fileIsMine = try disk.sameFile(outboxFile, stored)
        var anotherFileThere = false
        if !fileIsMine { anotherFileThere = try disk.lookUp(stored) != nil }
        if fileIsMine { try disk.unlink(stored) }
        if !anotherFileThere, try disk.sameFile(outboxFile.record, stored.record) { try disk.unlink(stored.record) }
        switch disk.attempt(.syncDirectory(stored, moves: [0])) {
        // Its directory in the area was never made (recursive spools: the move was cut before it).
        case nil, .noEntry?: break
        case let refusal?: throw .refused(refusal)
        }
    }

    /// A recorded move to sent/ whose file (at `target`, a second name the move gave it) no longer
    /// has the size or mtime it was sent with: written to after its upload, through the name the
    /// move had not taken away yet — never sent as it is now. It goes back to the outbox as
    /// `queued` (its record's second name dropped); nil when nothing changed, or when a new file
    /// has taken its outbox name and the name at `target` holds another record's move.
    package static func requeueIfChangedAfterUpload<D: DiskSteps>(_ file: RelativePath, manifest: Manifest, at target: SpoolPlace,
                                                                  on disk: inout D) throws(PlanStop) -> Requeued? {
        guard manifest.state == .sent, let now = try disk.inspect(target), !now.isVersion(of: manifest) else { return nil }
        let ours = try holdsOwnRecord(file, manifest: manifest, at: target, on: &disk)
        let outboxFile = SpoolPlace(.outbox, file)
        // Its outbox name back first, durably. Cut after the link, the outbox record still names
        // the second names, and the next claim, finding the file changed, drops them.
        do throws(PlanStop) {
            try disk.link(target, to: outboxFile)
        } catch .refused(.exists) {
            // A new file the producer put under that name meanwhile keeps it: this version comes
            // back beside it, under a free name, as a file of its own; the old record goes from
            // both places. Only if the name at `target` holds this record's move.
            guard ours else { return nil }
            let beside = SpoolPlace(.outbox, try besideName(file, bringingBack: target, on: &disk))
            try linkBeside(target, as: beside.path, on: &disk)
            if disk.exists(target.record) { try disk.unlink(target.record) }
            try disk.unlink(target)
            try disk.syncDirectory(of: target)
            try disk.unlink(outboxFile.record)
            try disk.syncDirectory(of: outboxFile)
            disk.note(PlanNote(.warn, "file changed after its upload was recorded; uploading it again beside the new file under its name",
                               ["file": file.logSafe, "queued_as": beside.path.logSafe]))
            return .beside(beside.path)
        }
        try disk.syncDirectory(of: outboxFile)
        if ours && disk.exists(target.record) { try disk.unlink(target.record) }
        try disk.unlink(target)
        try disk.syncDirectory(of: target)
        var again = manifest
        again.state = .queued
        again.storedAs = nil
        again.lastError = "file changed after its upload"
        // Its attempts delivered another version: none counts toward `max_attempts` now.
        again.attemptsBeforeRetry = again.attempts.count
        try disk.run(.writeRecord(again, at: outboxFile.record, syncDirectory: false))
        disk.note(PlanNote(.warn, "file changed after its upload was recorded; uploading it again", ["file": file.logSafe]))
        return .underItsName
    }
}
