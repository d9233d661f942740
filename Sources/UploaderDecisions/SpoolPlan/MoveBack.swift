import UploaderValues

/// Steps 6–8 of the crash contract — a file put back from retry/ into the outbox as `queued` —
/// planned over `DiskSteps`.
///
/// Order: the `queued` record in retry/, its link into the outbox, fsync; the file's link, fsync
/// (so the outbox never holds the file without its record, which would claim it afresh under a
/// new id); then the file leaves retry/, fsync, and the record. Run again on what a crash left
/// (start-up recovery does), it finishes the same move.
extension SpoolMoves {
    /// Puts the file at `path` in retry/ back into the outbox; returns the outbox name it has now.
    /// `resetBackoff` (for `uploader retry`) starts the attempt count and the backoff afresh.
    package static func moveBack<D: DiskSteps>(fromRetry path: RelativePath, resetBackoff: Bool, naming: StoredAsNaming,
                                               on disk: inout D) throws(PlanStop) -> RelativePath {
        while true {
            do throws(PlanStop) {
                return try moveBackOnce(path, resetBackoff: resetBackoff, naming: naming, on: &disk)
            } catch .startOver {
                // A producer dropped another file under the name after our record got there: our
                // record's name there is gone again, and the move starts over, to a free name.
            }
        }
    }

    private static func moveBackOnce<D: DiskSteps>(_ path: RelativePath, resetBackoff: Bool, naming: StoredAsNaming,
                                                   on disk: inout D) throws(PlanStop) -> RelativePath {
        let inRetry = SpoolPlace(.retry, path), underName = SpoolPlace(.outbox, path)
        guard case .parsed(var manifest) = disk.readRecord(inRetry) else { throw .recordMissing(inRetry.record) }
        var fileHere = disk.exists(inRetry)
        if !fileHere {
            // The file may have left retry/ in a move back killed right after that unlink, before
            // the directory's fsync: its absence is made durable before its record goes, or without
            // a journal a power cut could bring the file back alone, an orphan beside the copy in
            // the outbox that goes on to sent/.
            try disk.syncDirectory(of: inRetry)
        }
        try finishCutMoveUnderAnotherName(path, manifest: manifest, fileHere: &fileHere, naming: naming, on: &disk)
        // A move back cut short left its `queued` record (and maybe the file) in the outbox under
        // the same name: it is finished. A record of this file in a final state there belongs to a
        // move into retry/ cut before its last steps: that move is finished first, so the file
        // leaves the outbox before it comes back. A different file under that name is not this
        // one: only the old record goes. A `queued` record here whose file has left retry/ is a
        // move back that got as far as the outbox, where a later attempt has since finished: a
        // power cut brought the old record back; it goes.
        var resumed = false
        if case .parsed(let there) = disk.readRecord(underName), there.id == manifest.id {
            if there.state == .queued || there.state == .uploading {
                // Unless a producer dropped another file under the name after our record got there:
                // then the file goes to a free name (that file's claim settles the record beside it).
                var nameTaken = false
                if fileHere && disk.exists(underName) { nameTaken = try !disk.sameFile(inRetry, underName) }
                resumed = !nameTaken
                if nameTaken { try dropRecordLinkedBack(path, to: path, on: &disk) }
            } else if manifest.state == .queued && !fileHere {
                try disk.unlink(inRetry.record)
                try disk.syncDirectory(of: inRetry)
                throw .supersededRecord(path)
            } else if try holdsThisFile(underName, fileHere: fileHere, inRetry: inRetry, on: &disk) {
                if try disk.sameFile(inRetry.record, underName.record) {
                    try completeMove(path, manifest: there, to: .retry, as: path, deletesAfter: false, on: &disk)
                } else {
                    try endCutMoveUnderALaterRecord(path, fileHere: fileHere, on: &disk)
                }
                fileHere = true
            } else {
                // The record's name in retry/ (a cut move's link, maybe never fsynced) durable first:
                // without a journal a power cut could keep this removal and lose that link.
                try disk.syncDirectory(of: inRetry)
                try disk.unlink(underName.record)
            }
        }
        // Cut after its record reached the outbox under a numbered name (another file had taken
        // the name): finished there, or the file would come back under a second name as well.
        let earlier = resumed ? nil : try earlierTarget(of: path, id: manifest.id, fileHere: fileHere, on: &disk)
        if earlier?.recorded == true { resumed = true }
        var sameFileThere = false
        if fileHere { sameFileThere = try disk.sameFile(inRetry, underName) }
        let target: RelativePath
        if let earlier { target = earlier.name } else if resumed || sameFileThere { target = path } else {
            target = try freeName(underName, on: &disk)
        }
        let outboxTarget = SpoolPlace(.outbox, target)
        if !resumed {
            guard fileHere else { throw .recordWithoutFile(path) }
            manifest.state = .queued
            manifest.nextAttemptAt = nil
            manifest.storedAs = naming.storedAs(inRetry)
            // The record names the outbox name it goes to: a hook's run and retention find the
            // record of a move from there by it.
            manifest.setOutboxPath(target)
            if resetBackoff { manifest.attemptsBeforeRetry = manifest.attempts.count }
            // Durable in retry/ before its outbox name exists: without a journal, a power cut could
            // otherwise keep the outbox's `queued` record and bring back the old `failed` one in
            // retry/, which would then outlive its file there.
            try disk.run(.writeRecord(manifest, at: inRetry.record, syncDirectory: true))
            try disk.run(.makeParents(outboxTarget, move: 0))
            try disk.link(inRetry.record, to: outboxTarget.record)
            try disk.syncDirectory(of: outboxTarget)
        }
        if fileHere {
            do throws(PlanStop) {
                do throws(PlanStop) {
                    try disk.link(inRetry, to: outboxTarget)
                    try disk.syncDirectory(of: outboxTarget)
                    try disk.unlink(inRetry)
                } catch .refused(.notPermitted) {
                    // Another user's file we may neither link nor read (as in a move): renamed.
                    try disk.run(.rename(inRetry, to: outboxTarget, move: 0))
                    try disk.syncDirectory(of: outboxTarget)
                }
            } catch .refused(.exists) {
                // A producer dropped another file under the name after our record got there: our
                // record's name goes again (left beside that file, its claim would take it for the
                // file's own, key and resumable upload included), and the move starts over.
                guard try dropRecordLinkedBack(path, to: target, on: &disk) else { throw .refused(.exists) }
                throw .startOver
            }
            try disk.syncDirectory(of: inRetry)
        }
        try disk.unlink(inRetry.record)
        // Else a power cut could bring this `queued` record back to retry/ long after its file left.
        try disk.syncDirectory(of: inRetry)
        return target
    }

    /// A claimed file whose `queued` record came back from retry/ (its `stored_as` names the place
    /// there) in a move back cut after the file left retry/ and before its record did: a failed
    /// fsync of retry/ stops the move there, and the record's name in retry/ still leads to the
    /// very record in the outbox. The claim does the move's last steps: the file's name in retry/
    /// (while it leads to this file) goes durably, then the record's. False when the record is no
    /// such move.
    package static func finishCutMoveBack<D: DiskSteps>(_ path: RelativePath, manifest: Manifest, file: FileIdentity,
                                                        naming: StoredAsNaming, on disk: inout D) throws(PlanStop) -> Bool {
        guard [.queued, .uploading].contains(manifest.state), let stored = manifest.storedAs.flatMap(naming.place),
              stored.area == .retry else { return false }
        let outbox = SpoolPlace(.outbox, path)
        // Looked at without the lock first: almost every record moved back has left retry/ whole.
        guard try disk.sameFile(outbox.record, stored.record) else { return false }
        return try disk.underRetryMoveLock(exclusive: false) { disk throws(PlanStop) -> Bool in
            guard try disk.sameFile(outbox.record, stored.record) else { return false }
            if let there = try disk.lookUp(stored) {
                // Another file under the name in retry/ is not this move's to touch.
                guard there == file else { return false }
                try disk.unlink(stored)
            }
            // The file's absence there durable before its record's, as in the move itself.
            try disk.syncDirectory(of: stored)
            try disk.unlink(stored.record)
            try disk.syncDirectory(of: stored)
            disk.note(PlanNote(.info, "finished an interrupted move back from retry/", ["file": path.logSafe, "stored_as": manifest.storedAs ?? ""]))
            return true
        }
    }

    /// Whether the outbox name `place` holds the file of a cut move into retry/: a file is there,
    /// and it is the one in retry/ (or that one has left retry/).
    private static func holdsThisFile<D: DiskSteps>(_ place: SpoolPlace, fileHere: Bool, inRetry: SpoolPlace,
                                                    on disk: inout D) throws(PlanStop) -> Bool {
        guard disk.exists(place) else { return false }
        guard fileHere else { return true }
        return try disk.sameFile(inRetry, place)
    }

    /// Ends a move into retry/ cut before its outbox names went, whose record in retry/ has been
    /// rewritten since (a move back, `uploader retry`): that record is the later one and stays. The
    /// file gets its name in retry/ if it lacks it, retry/ is fsynced, then the file's and the
    /// record's outbox names go, each removal durable before the move back links new ones there.
    private static func endCutMoveUnderALaterRecord<D: DiskSteps>(_ path: RelativePath, fileHere: Bool,
                                                                  on disk: inout D) throws(PlanStop) {
        let inRetry = SpoolPlace(.retry, path), underName = SpoolPlace(.outbox, path)
        if !fileHere { try disk.link(underName, to: inRetry) }
        try disk.syncDirectory(of: inRetry)
        try disk.unlink(underName)
        try disk.syncDirectory(of: underName)
        try disk.unlink(underName.record)
        try disk.syncDirectory(of: underName)
    }

    /// Removes the outbox name `target` of the record of `path` in retry/ (a move back's link of
    /// it, there before a producer dropped another file under the name), durably; true if it was
    /// that record. Left beside the other file, its claim would take the record for the file's own.
    @discardableResult
    private static func dropRecordLinkedBack<D: DiskSteps>(_ path: RelativePath, to target: RelativePath,
                                                           on disk: inout D) throws(PlanStop) -> Bool {
        let there = SpoolPlace(.outbox, target)
        guard try disk.sameFile(there.record, SpoolPlace(.retry, path).record) else { return false }
        try disk.unlink(there.record)
        try disk.syncDirectory(of: there)
        return true
    }

    /// The numbered outbox name (`a.2.bin`, …) where a move back of the file with `id`, cut short,
    /// already put its `queued` record (`recorded`), or the file itself (a power cut may keep
    /// either link without the other): the names `freeName` would have tried, while taken.
    private static func earlierTarget<D: DiskSteps>(of path: RelativePath, id: String, fileHere: Bool,
                                                    on disk: inout D) throws(PlanStop) -> (name: RelativePath, recorded: Bool)? {
        var n = 2
        var candidate = SpoolPlace(.outbox, SpoolPlace.numbered(path, n))
        while disk.exists(candidate) || disk.exists(candidate.record) {
            if case .parsed(let there) = disk.readRecord(candidate), there.id == id, there.state == .queued || there.state == .uploading {
                return (candidate.path, true)
            }
            if fileHere, try disk.sameFile(SpoolPlace(.retry, path), candidate) { return (candidate.path, false) }
            n += 1
            candidate = SpoolPlace(.outbox, SpoolPlace.numbered(path, n))
        }
        return nil
    }

    /// A move into retry/ under a numbered name (another file had the name there) cut before its
    /// last steps leaves its record, and maybe the file, under the outbox name the file had (the
    /// record's own `path`), not under its name in retry/: that move is finished first, as one
    /// under the same name is, or the file would be queued twice.
    private static func finishCutMoveUnderAnotherName<D: DiskSteps>(_ path: RelativePath, manifest: Manifest, fileHere: inout Bool,
                                                                    naming: StoredAsNaming, on disk: inout D) throws(PlanStop) {
        let origin = SpoolPlace(.outbox, manifest.outboxPath), inRetry = SpoolPlace(.retry, path)
        guard origin.path != path, [.retry, .failed].contains(manifest.state),
              case .parsed(let there) = disk.readRecord(origin), there.id == manifest.id,
              [.retry, .failed].contains(there.state), there.storedAs == naming.storedAs(inRetry) else { return }
        if try holdsThisFile(origin, fileHere: fileHere, inRetry: inRetry, on: &disk) {
            try completeMove(origin.path, manifest: there, to: .retry, as: path, deletesAfter: false, on: &disk)
            fileHere = true
        } else {
            // Another file has the old name (or none does): only the record's name there goes,
            // its name in retry/ durable first.
            try disk.syncDirectory(of: inRetry)
            try disk.unlink(origin.record)
            try disk.syncDirectory(of: origin)
        }
    }
}
