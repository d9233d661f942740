import Foundation
import UploaderSupport
import UploaderConfig
import UploaderDecisions

/// The one state machine of a file — `queued → uploading → sent | retry | failed` — and the
/// durable order of the writes behind each transition.
///
/// Every manifest write is: temporary file, write, fsync, rename over the old manifest.
/// The order below is what makes a crash (kill -9 or power cut) between any two steps
/// recoverable by `Recovery` at the next start, with nothing lost:
///
/// Start of an attempt (claim):
///  1. manifest `uploading` with a new attempt → outbox/NAME.manifest.json (fsynced).
///     Crash after 1: recovery marks that attempt `interrupted` and re-queues the file.
///     Only after 1 is a request sent. Should a power cut undo the rename of 1, the file is
///     claimed afresh under the same id: ids are derived from the file (`ManifestID`).
/// Finish (2xx → sent/, otherwise → retry/ with state `retry` or `failed`):
///  2. manifest with the final state and `stored_as` (the free name in sent/ or retry/),
///     rewritten in the outbox, fsynced, and the outbox fsynced.
///     Crash after 2: outbox holds the file and a manifest in a final state → recovery
///     finishes the move (the file is not uploaded again).
///  3. link the file and the manifest into sent/ (or retry/) under the free name; fsync it.
///     Crash after 3: the same file under both names → the move is run again, the names that
///     already lead to it count as done.
///  4. unlink the file's outbox name; fsync the outbox. Crash after 4: outbox holds the manifest
///     alone, and sent/ has the same record → recovery removes the outbox copy.
///  5. unlink the manifest's outbox name (three directory fsyncs per move in all; moves that
///     finish together share each of them, `Batcher`, and `DirectorySyncer` shares what is left).
///     A move into sent/ adds a line to the `SentLedger` once the manifest's new name there is
///     durable (no fsync of its own: a statistic, whose last lines a power cut may take). With
///     `after_send = delete` and no hook due, the file and its manifest leave sent/ again before
///     this step (`FileLifecycle+AfterSend`): the outbox record tells recovery a deletion was due.
///     A manifest that names a hook due gets its marker (`HookLedger`) before step 3, so no due
///     hook is ever only in sent/ or retry/, where start-up does not look.
///     Links, not renames: on a file system without a journal each directory's entries persist
///     on their own, and a rename's removal can persist without its addition — losing the file.
/// Back from retry/ (due, or `uploader retry`):
///  6. manifest `queued` rewritten in retry/, retry/ fsynced; linked into the outbox; outbox fsynced.
///  7. the file linked into the outbox; outbox fsynced (never a file without its manifest there).
///  8. the file's retry/ name unlinked, retry/ fsynced, then the manifest's. Recovery runs
///     whatever part is left (a `queued` manifest in retry/ is a move back to finish); when the
///     file's name is already gone, it fsyncs retry/ before the manifest goes, since that
///     unlink may not be durable yet (a kill -9 between it and its fsync).
package struct FileLifecycle: Sendable {
    package let spool: Spool
    var fs: any SpoolFileSystem { spool.fs }
    package let logger: Logger
    /// `after_send`: whether a delivered file leaves sent/ once its move (and hook) is done.
    package let afterSend: AfterSend
    /// Live moves that finish together run as one batch and share each directory fsync (one per
    /// directory and step): on a disk like the bench's, a directory fsync (a flush request and
    /// its interrupt) costs as much CPU as the rest of a small file's bookkeeping, and
    /// `DirectorySyncer` alone shares one only among callers that ask while it runs.
    private let moves: Batcher<PendingMove, Bool>

    /// `scheduler` runs the waits of moves batched together (the system's, but in the simulator).
    package init(spool: Spool, logger: Logger, afterSend: AfterSend = .keep, scheduler: any Scheduler = .system) {
        self.spool = spool
        self.logger = logger
        self.afterSend = afterSend
        moves = Batcher(scheduler: scheduler)
    }

    /// Step 1: records the start of an attempt. An attempt left open by a crash is closed as interrupted.
    package func beginAttempt(_ file: ClaimedFile, now: Date) throws {
        try commitAttempt(prepareAttempt(file, now: now), of: file)
    }

    /// Step 1's record, written and fsynced aside (while the previous upload's record is still
    /// being rewritten); `commitAttempt` puts it in place.
    package func prepareAttempt(_ file: ClaimedFile, now: Date) throws -> Spool.PreparedManifest {
        var manifest = file.manifest
        manifest.closeOpenAttempt(at: now, interrupted: true)
        manifest.state = .uploading
        manifest.nextAttemptAt = nil
        manifest.attempts.append(Manifest.Attempt(startedAt: Timestamp.format(now)))
        return try spool.prepareManifest(manifest, for: file.path, in: .outbox)
    }

    /// Step 1 done: the record says `uploading`. No directory fsync: if a power cut undoes this
    /// rename, the file is claimed again under the same id (`ManifestID` derives it from the
    /// file), so the Idempotency-Key of a request already sent is the same as the one sent again.
    package func commitAttempt(_ prepared: Spool.PreparedManifest, of file: ClaimedFile) throws {
        try spool.commit(prepared)
        file.manifest = prepared.manifest
    }

    /// Steps 2–5: moves the file and its manifest to sent/ or retry/ with `manifest` as final record.
    /// Returns the path it now has inside that area.
    ///
    /// `unchanged` is asked once the file also has its name in `area`: a change it reports (a
    /// producer wrote to the file between the last check and the move) takes that name away
    /// again and throws `ChangedDuringMove`, so content never sent is never filed as sent.
    /// `recorded` is called as soon as the final record is in place (before the fsync that makes
    /// it durable): from then on the outbox no longer says this file is uploading.
    /// `file`: the claimed file's identity; an outbox name leading to another file is not moved.
    @discardableResult
    package func finish(_ path: RelativePath, manifest original: Manifest, to area: Spool.Area, file: FileSystem.Status? = nil,
                        unchanged: (() -> String?)? = nil, recorded: () -> Void = {}) throws -> RelativePath {
        // A move into retry/ runs whole under the retry-move lock: `uploader retry` must not move
        // the file back between its link there and its outbox name's unlink.
        try RetryMoveLock(spool: spool).around(.shared, when: area == .retry) {
            try fileAway(path, manifest: original, to: area, file: file, unchanged: unchanged, recorded: recorded)
        }
    }

    /// Steps 2–5 of `finish`. The free name the record gives the file may be taken before the
    /// file's link (another file's move chose it too, or a file put there by hand): the record is
    /// written again with the next free name, and the move goes on under it.
    private func fileAway(_ path: RelativePath, manifest original: Manifest, to area: Spool.Area, file: FileSystem.Status?,
                          unchanged: (() -> String?)?, recorded: () -> Void) throws -> RelativePath {
        var move = try recordFinal(path, manifest: original, to: area, live: unchanged != nil)
        move.file = file
        recorded()
        var namesTaken = 0
        while true {
            do {
                let fileHere = try moves.run(move) { batch in moveTogether(batch) }
                try endMove(move, fileHere: fileHere, unchanged: unchanged)
                return move.target
            } catch let taken as TargetTaken where namesTaken + 1 < Self.namesTried {
                namesTaken += 1
                logger.debug("the name chosen in \(area.rawValue)/ was taken meanwhile; the next free one is used",
                             ["file": path.logSafe, "taken": taken.target.logSafe])
                move = try recordFinal(path, manifest: original, to: area, live: unchanged != nil)
                move.file = file
            }
        }
    }

    /// How many free names a live move tries before it gives up (and the file stays queued).
    static let namesTried = 5

    /// The name a move was to give its file in sent/ or retry/ holds another file.
    struct TargetTaken: Error, CustomStringConvertible {
        var target: RelativePath
        var description: String { "the name \(target.logSafe) was taken by another file" }
    }

    /// Step 2's write: the final record, naming the file's free name in `area`, in place in the
    /// outbox (its directory fsync comes first in the move, shared by the batch). Durable before
    /// anything moves (DESIGN §4: a manifest write ends with a directory fsync): without it a
    /// power cut could keep the file's move and lose the record of why.
    func recordFinal(_ path: RelativePath, manifest original: Manifest, to area: Spool.Area, live: Bool) throws -> PendingMove {
        precondition(area != .outbox)
        let target = spool.freeName(for: path, in: area)
        var manifest = original
        manifest.storedAs = spool.storedAs(target, in: area)
        try spool.writeManifest(manifest, for: path, in: .outbox)
        return PendingMove(path: path, manifest: manifest, area: area, target: target, live: live, recordFirst: true)
    }

    /// The file changed between the last check and its move; it is still in the outbox.
    package struct ChangedDuringMove: Error, Equatable, CustomStringConvertible {
        package var change: String
        /// The free outbox name the changed file came back under, when a new file had taken its
        /// own meanwhile (nil: back under its own name).
        package var broughtBackAs: RelativePath? = nil
        package var description: String { "file changed during its move (\(change))" }
    }

    /// Steps 3–5 alone (recovery runs them again on whatever a crash left): the file gets its name
    /// in `area` (link), `area` is fsynced, its outbox name goes, the outbox is fsynced; then the
    /// manifest the same way. At every instant some durable name holds each, whatever a power cut
    /// keeps — on a journalled file system or on one without a journal, where each directory's
    /// entries persist on their own (a rename's removal can persist without its addition).
    ///
    /// `unchanged` (a live move) is asked once the file is out of the producer's reach: if it
    /// reports a change, the file goes back to the outbox and `ChangedDuringMove` is thrown.
    package func completeMove(_ path: RelativePath, manifest: Manifest, to area: Spool.Area, as target: RelativePath,
                              unchanged: (() -> String?)? = nil, file: FileSystem.Status? = nil) throws {
        let move = PendingMove(path: path, manifest: manifest, area: area, target: target, live: unchanged != nil,
                               recordFirst: false, file: file)
        let fileHere = try moveTogether([move])[0].get()
        try endMove(move, fileHere: fileHere, unchanged: unchanged)
    }

    /// Step 2's fsync (when asked) and steps 3–4 for several moves at once, as `MoveBatchPlan`
    /// plans them: each file's writes in the order above, each directory fsynced once per step
    /// for all of them. Says for each move whether its file was in the outbox, or what stopped
    /// it; one move failing stops only that one.
    func moveTogether(_ batch: [PendingMove]) -> [Result<Bool, any Error>] {
        var plan = MoveBatchPlan(batch.map(\.planned))
        var performer = DiskStepPerformer(lifecycle: self, moves: batch)
        performer.run({ plan.next() }, { plan.took($0) })
        return plan.results.enumerated().map { index, result in
            switch result {
            case .moved(let fileHere): return .success(fileHere)
            case .failed(let failure): return .failure(performer.error(of: failure, move: index))
            }
        }
    }

    /// Runs `MoveEndPlan` for the move of `path` to `target` in `area`.
    func endPlanned(_ path: RelativePath, manifest: Manifest, to area: Spool.Area, as target: RelativePath,
                    namesMayBeUnsynced: Bool) throws {
        let move = PendingMove(path: path, manifest: manifest, area: area, target: target, live: false, recordFirst: false)
        var plan = MoveEndPlan(path: path, area: area, target: target, deletesAfter: deletesAfterMove(manifest, in: area),
                               namesMayBeUnsynced: namesMayBeUnsynced)
        var performer = DiskStepPerformer(lifecycle: self, moves: [move])
        performer.run({ plan.next() }, { plan.took($0) })
        if let failure = plan.failure { throw performer.error(of: failure, move: 0) }
    }

    /// Step 5, by each mover itself: `unchanged` is asked once the file is out of the producer's
    /// reach; a change takes its new name away again (back to the outbox, `ChangedDuringMove`).
    /// Then the manifest's outbox name goes.
    func endMove(_ move: PendingMove, fileHere: Bool, unchanged: (() -> String?)?) throws {
        if fileHere, let change = unchanged?() {
            // The file goes back first, its record's new name after it (`bringBack` takes that
            // name too, being the outbox record's): whatever fails on the way, the file is never
            // left in `area` without its record.
            //
            // The producer may have dropped a new file under the name meanwhile: the changed one
            // then comes back beside it, under a free name and without a record (a file of its own).
            func comeBackBeside() throws -> Never {
                let beside = try spool.besideName(for: move.path, bringingBack: move.target, from: move.area)
                try bringBack(move.target, from: move.area, to: beside)
                try fs.unlink(Spool.manifestName(for: move.target), in: spool.directory(move.area))
                try spool.syncDirectory(of: move.target, in: move.area)
                throw ChangedDuringMove(change: change, broughtBackAs: beside)
            }
            // Looked at first (the link's own refusal of a taken name needs one more lstat to tell
            // it from a name that already leads to this file); a name taken since is refused by the link.
            if fs.exists(move.path, in: spool.directory(.outbox)) { try comeBackBeside() }
            do {
                try bringBack(move.target, from: move.area, to: move.path)
            } catch let error as SystemError where error.code == .exists {
                try comeBackBeside()
            }
            try dropRecordLeftIn(move)
            throw ChangedDuringMove(change: change)
        }
        try endPlanned(move.path, manifest: move.manifest, to: move.area, as: move.target, namesMayBeUnsynced: false)
    }

    /// This move's record in `area`, left there by `bringBack` when a rescan had already dropped
    /// its outbox name (finishing the move as the start-up would): the file has left `area`, so
    /// the record goes too (the core writes the file a new one in the outbox).
    private func dropRecordLeftIn(_ move: PendingMove) throws {
        guard case .success(let there) = spool.readManifest(for: move.target, in: move.area), there.id == move.manifest.id else { return }
        try fs.unlink(Spool.manifestName(for: move.target), in: spool.directory(move.area))
        try spool.syncDirectory(of: move.target, in: move.area)
    }

    /// The subdirectories `path` needs in `area` (recursive spools), each made durable in its
    /// parent: a name whose directory itself could vanish in a power cut is no durable name.
    func makeDurableParents(of path: RelativePath, in area: Spool.Area) throws {
        guard path.parent != nil else { return }
        try fs.makeParents(of: path, in: spool.directory(area))
        var prefix = RelativePath(bytes: [])
        for component in path.components.dropLast() {
            prefix = prefix.appending(RelativePath(bytes: component))
            try spool.syncDirectory(of: prefix, in: area)
        }
    }

    /// link(2), where a name that already leads to this very file counts as done (a move run
    /// again after a crash); any other file under that name is an error. A name that was taken
    /// and is gone by the time it is looked at (retention deleting the copy an earlier, cut move
    /// left in sent/) is linked again. True when the name is new.
    @discardableResult
    func link(_ name: RelativePath, in fromDir: String, to target: RelativePath, in toDir: String) throws -> Bool {
        var freed = 0
        while true {
            do {
                try fs.link(name, in: fromDir, to: target, in: toDir)
                return true
            } catch let error as SystemError where error.code == .exists {
                if let there = try fs.statusIfPresent(target, in: toDir) {
                    let mine = try fs.status(name, in: fromDir)
                    guard there.inode == mine.inode && there.device == mine.device else { throw error }
                    return false
                }
                freed += 1
                if freed == Self.linkTriesOnAFreedName { throw error }
            }
        }
    }

    /// How often `link` tries again a name that keeps being freed right after refusing it.
    private static let linkTriesOnAFreedName = 3

    /// Removes the names in sent/ or retry/ (`stored`) that are second names of the file at `path`
    /// in the outbox and of its manifest there, as a move cut after its links leaves them, and makes
    /// their absence durable, also when they were already gone: an earlier process may have removed
    /// them and been killed (or refused the fsync) before that was durable, and without a journal a
    /// power cut would bring them back once the record, the one thing saying they go, has gone. A
    /// name there that leads to another file is left alone, and so is the record's name beside it:
    /// a file there that is not the outbox's is the version this record moved (the producer put a
    /// new file under the outbox name after the link), and the record stays with it.
    package func dropSecondNames(of path: RelativePath, recordedAs stored: String?) throws {
        guard let stored, let (area, target) = spool.resolveStoredAs(stored), area != .outbox else { return }
        let outbox = spool.directory(.outbox), dir = spool.directory(area)
        let fileIsMine = try sameFileIfPresent(path, in: outbox, target, in: dir)
        let anotherFileThere = try !fileIsMine && fs.statusIfPresent(target, in: dir) != nil
        if fileIsMine { try fs.unlink(target, in: dir) }
        let record = Spool.manifestName(for: path), recordThere = Spool.manifestName(for: target)
        if !anotherFileThere, try sameFileIfPresent(record, in: outbox, recordThere, in: dir) {
            try fs.unlink(recordThere, in: dir)
        }
        do {
            try spool.syncDirectory(of: target, in: area)
        } catch let error as SystemError where error.code == .noEntry {
            // Its directory in `area` was never made (recursive spools: the move was cut before
            // it): no name of it there to make durable.
        }
    }

    /// True when both names lead to one file (same device and inode); false when either name is
    /// absent. Any other failure is thrown (what cannot be looked at is never taken for another file).
    package func sameFileIfPresent(_ a: RelativePath, in aDir: String, _ b: RelativePath, in bDir: String) throws -> Bool {
        guard let sa = try fs.statusIfPresent(a, in: aDir), let sb = try fs.statusIfPresent(b, in: bDir) else { return false }
        return sa.inode == sb.inode && sa.device == sb.device
    }

    /// Whether the record named for `target` in `area` is this file's own (`manifest`, recorded in
    /// the outbox at `file`): a second name of the outbox record, or a record with its id. Absent
    /// or not a manifest (ours are renamed into place whole) is not; one that cannot be read throws.
    package func holdsOwnRecord(_ file: RelativePath, manifest: Manifest, at target: RelativePath, in area: Spool.Area) throws -> Bool {
        if try sameFileIfPresent(Spool.manifestName(for: file), in: spool.directory(.outbox), Spool.manifestName(for: target),
                                 in: spool.directory(area)) { return true }
        switch spool.readManifest(for: target, in: area) {
        case .success(let there): return there.id == manifest.id
        case .failure(.missing), .failure(.corrupt): return false
        case .failure(.unreadable(let error)): throw error
        }
    }

    /// A recorded move to sent/ whose file (at `target`, a second name the move gave it) no longer
    /// has the size or mtime it was sent with: written to after its upload, through the name the
    /// move had not taken away yet — never sent as it is now. It goes back to the outbox as
    /// `queued` (its record's second name dropped) and true is returned; false when nothing changed,
    /// or when a new file has taken its outbox name.
    package func requeueIfChangedAfterUpload(_ file: RelativePath, manifest: Manifest, in area: Spool.Area,
                                            as target: RelativePath) throws -> Requeued? {
        let dir = spool.directory(area)
        guard manifest.state == .sent, let now = try fs.statusIfPresent(target, in: dir),
              now.size != manifest.size || now.mtimeText != manifest.mtime else { return nil }
        let targetManifest = Spool.manifestName(for: target)
        let ours = try holdsOwnRecord(file, manifest: manifest, at: target, in: area)
        // Its outbox name back first, durably. Cut after the link, the outbox record still names
        // the second names, and the next claim, finding the file changed, drops them.
        let outbox = spool.directory(.outbox)
        do {
            _ = try link(target, in: dir, to: file, in: outbox)
        } catch let error as SystemError where error.code == .exists {
            // A new file the producer put under that name meanwhile keeps it: this version comes
            // back beside it, under a free name, as a file of its own; the old record goes from
            // both places (beside the new file, its claim would finish this move with that file).
            // Only if the name in `area` holds this record's move: another record there is
            // another file's, filed as it was sent.
            guard ours else { return nil }
            let beside = try spool.besideName(for: file, bringingBack: target, from: area)
            _ = try link(target, in: dir, to: beside, in: outbox)
            try spool.syncDirectory(of: beside, in: .outbox)
            if fs.exists(targetManifest, in: dir) { try fs.unlink(targetManifest, in: dir) }
            try fs.unlink(target, in: dir)
            try spool.syncDirectory(of: target, in: area)
            try fs.unlink(Spool.manifestName(for: file), in: outbox)
            try spool.syncDirectory(of: file, in: .outbox)
            logger.warn("file changed after its upload was recorded; uploading it again beside the new file under its name",
                        ["file": file.logSafe, "queued_as": beside.logSafe])
            return .beside(beside)
        }
        try spool.syncDirectory(of: file, in: .outbox)
        if ours && fs.exists(targetManifest, in: dir) { try fs.unlink(targetManifest, in: dir) }
        try fs.unlink(target, in: dir)
        try spool.syncDirectory(of: target, in: area)
        var again = manifest
        again.state = .queued
        again.storedAs = nil
        again.lastError = "file changed after its upload"
        // Its attempts delivered another version: none counts toward `max_attempts` now (a power
        // cut that undoes the producer's write brings that version back under this record).
        again.attemptsBeforeRetry = again.attempts.count
        try spool.writeManifest(again, for: file, in: .outbox)
        logger.warn("file changed after its upload was recorded; uploading it again", ["file": file.logSafe])
        return .underItsName
    }

    /// Where `requeueIfChangedAfterUpload` put a changed file back in the outbox.
    package enum Requeued: Equatable {
        /// Under its own name, with its record rewritten as `queued`.
        case underItsName
        /// Under this free name, without a record (a new file had taken its own); the new file
        /// under its name has no record either.
        case beside(RelativePath)
    }

    /// Gives the file at `path` in `area` its outbox name `file` back, durably, then takes the old
    /// names away — the file's, then its record's when it is the very record the outbox holds —
    /// as the move back would have (one cut after its manifest reached the outbox).
    package func bringBack(_ path: RelativePath, from area: Spool.Area, to file: RelativePath) throws {
        let outbox = spool.directory(.outbox)
        let dir = spool.directory(area)
        try link(path, in: dir, to: file, in: outbox)
        try spool.syncDirectory(of: file, in: .outbox)
        try fs.unlink(path, in: dir)
        // The file's name there goes durably before its record's: without a journal a power cut
        // could otherwise keep the record's removal and not the file's, and leave it there alone.
        try spool.syncDirectory(of: path, in: area)
        let record = Spool.manifestName(for: path)
        if try sameFileIfPresent(Spool.manifestName(for: file), in: outbox, record, in: dir) {
            try fs.unlink(record, in: dir)
            try spool.syncDirectory(of: path, in: area)
        }
    }

    /// Removes the outbox name `target` of the record of `path` in retry/ (a move back's link of
    /// it, there before a producer dropped another file under the name), durably; true if it was
    /// that record. Left beside the other file, its claim would take the record for the file's own.
    @discardableResult
    private func dropRecordLinkedBack(_ path: RelativePath, to target: RelativePath) throws -> Bool {
        let there = Spool.manifestName(for: target)
        let outbox = spool.directory(.outbox)
        guard try sameFileIfPresent(there, in: outbox, Spool.manifestName(for: path), in: spool.directory(.retry)) else { return false }
        try fs.unlink(there, in: outbox)
        try spool.syncDirectory(of: target, in: .outbox)
        return true
    }

    /// A record in retry/ whose file is in neither retry/ nor the outbox: a move into retry/ cut by
    /// a power cut that kept the record's new name and not the file's, the file then taken away by
    /// its producer. Nothing is left to send; the record is moved aside.
    package struct RecordWithoutFile: Error, CustomStringConvertible {
        package var path: String
        package var description: String { "\(path): the manifest is in retry/, its file is not" }
    }

    /// A stale move-back record in retry/ (a power cut brought it back) for a file the outbox
    /// holds a later record of: it was removed, and nothing moved back.
    package struct SupersededRecord: Error, CustomStringConvertible {
        package var path: String
        package var description: String { "\(path): an old record of a file the outbox has a later one of (removed)" }
    }

    /// The numbered outbox name (`a.2.bin`, …) where a move back of the file with `id`, cut short,
    /// already put its `queued` record (`recorded`), or the file itself (a power cut may keep
    /// either link without the other): the names `freeName` would have tried, while taken.
    private func earlierTarget(of path: RelativePath, id: String, fileHere: Bool) throws -> (name: RelativePath, recorded: Bool)? {
        let outbox = spool.directory(.outbox)
        var n = 2
        var candidate = Spool.numbered(path, n)
        while fs.exists(candidate, in: outbox) || fs.exists(Spool.manifestName(for: candidate), in: outbox) {
            if case .success(let there) = spool.readManifest(for: candidate, in: .outbox), there.id == id,
               there.state == .queued || there.state == .uploading {
                return (candidate, true)
            }
            if try fileHere && sameFileIfPresent(path, in: spool.directory(.retry), candidate, in: outbox) { return (candidate, false) }
            n += 1
            candidate = Spool.numbered(path, n)
        }
        return nil
    }

    /// A move into retry/ under a numbered name (another file had the name there) cut before its
    /// last steps leaves its record, and maybe the file, under the outbox name the file had (the
    /// record's own `path`), not under its name in retry/: that move is finished first, as one
    /// under the same name is, or the file would be queued twice — under the name it comes back
    /// to, and under the old one, whose claim would finish the move into retry/ once more.
    private func finishCutMoveUnderAnotherName(of path: RelativePath, manifest: Manifest, fileHere: inout Bool) throws {
        let origin = manifest.outboxPath, outbox = spool.directory(.outbox), retryDir = spool.directory(.retry)
        guard origin != path, [.retry, .failed].contains(manifest.state),
              case .success(let there) = spool.readManifest(for: origin, in: .outbox), there.id == manifest.id,
              [.retry, .failed].contains(there.state), there.storedAs == spool.storedAs(path, in: .retry) else { return }
        if fs.exists(origin, in: outbox), try !fileHere || sameFileIfPresent(path, in: retryDir, origin, in: outbox) {
            try completeMove(origin, manifest: there, to: .retry, as: path)
            fileHere = true
        } else {
            // Another file has the old name (or none does): only the record's name there goes,
            // its name in retry/ durable first.
            try spool.syncDirectory(of: path, in: .retry)
            try fs.unlink(Spool.manifestName(for: origin), in: outbox)
            try spool.syncDirectory(of: origin, in: .outbox)
        }
    }

    /// Steps 6–8: puts a file from retry/ back into the outbox as `queued`.
    /// `resetBackoff` (for `uploader retry`) starts the attempt count and the backoff afresh; the history stays.
    ///
    /// Order: the `queued` manifest in retry/, its link into the outbox, fsync; the file's link,
    /// fsync (so the outbox never holds the file without its manifest, which would claim it
    /// afresh under a new id); then the file leaves retry/, fsync, and the manifest. Run again on
    /// what a crash left (start-up recovery does), it finishes the same move.
    @discardableResult
    package func moveBack(fromRetry path: RelativePath, resetBackoff: Bool) throws -> RelativePath {
        let retryDir = spool.directory(.retry)
        let outbox = spool.directory(.outbox)
        guard case .success(var manifest) = spool.readManifest(for: path, in: .retry) else {
            throw SystemError("read manifest", path: Spool.manifestName(for: path).displayed(in: retryDir), code: .noEntry)
        }
        var fileHere = fs.exists(path, in: retryDir)
        if !fileHere {
            // The file may have left retry/ in a move back killed right after that unlink, before
            // the directory's fsync: its absence is made durable before its record goes, or without
            // a journal a power cut could bring the file back alone, an orphan beside the copy in
            // the outbox that goes on to sent/.
            try spool.syncDirectory(of: path, in: .retry)
        }
        // A move back cut short left its `queued` record (and maybe the file) in the outbox under
        // the same name: it is finished. A record of this file in a final state there belongs to a
        // move into retry/ cut before its last steps: that move is finished first, so the file
        // leaves the outbox before it comes back (without a journal the manifest's new name can
        // persist while the file's does not, and a file still in the outbox under its old name
        // would be claimed afresh). A different file under that name
        // (dropped since) is not this one: only the old record goes. A `queued` record here whose
        // file has left retry/ is a move back that got as far as the outbox, where a later attempt
        // has since finished: a power cut brought the old record back. It
        // goes; the outbox's record is the file's, and its claim finishes whatever it records.
        try finishCutMoveUnderAnotherName(of: path, manifest: manifest, fileHere: &fileHere)
        var resumed = false
        if case .success(let there) = spool.readManifest(for: path, in: .outbox), there.id == manifest.id {
            if there.state == .queued || there.state == .uploading {
                // Unless a producer dropped another file under the name after our record got there:
                // then the file goes to a free name (that file's claim settles the record beside it).
                let nameTaken = try fileHere && fs.exists(path, in: outbox) && !sameFileIfPresent(path, in: retryDir, path, in: outbox)
                resumed = !nameTaken
                if nameTaken { try dropRecordLinkedBack(path, to: path) }
            } else if manifest.state == .queued && !fileHere {
                try fs.unlink(Spool.manifestName(for: path), in: retryDir)
                try spool.syncDirectory(of: path, in: .retry)
                throw SupersededRecord(path: path.displayed(in: retryDir))
            } else if fs.exists(path, in: outbox), try !fileHere || sameFileIfPresent(path, in: retryDir, path, in: outbox) {
                try completeMove(path, manifest: there, to: .retry, as: path)
                fileHere = true
            } else {
                // The record's name in retry/ (a cut move's link, maybe never fsynced) durable
                // first: without a journal a power cut could keep this removal and lose that link.
                try spool.syncDirectory(of: path, in: .retry)
                try fs.unlink(Spool.manifestName(for: path), in: outbox)
            }
        }
        // Cut after its record reached the outbox under a numbered name (another file had taken
        // the name): finished there, or the file would come back under a second name as well.
        let earlier = resumed ? nil : try earlierTarget(of: path, id: manifest.id, fileHere: fileHere)
        if earlier?.recorded == true { resumed = true }
        let sameFileThere = try fileHere && sameFileIfPresent(path, in: retryDir, path, in: outbox)
        let target = earlier?.name ?? (resumed || sameFileThere ? path : spool.freeName(for: path, in: .outbox))
        if !resumed {
            guard fileHere else { throw RecordWithoutFile(path: path.displayed(in: retryDir)) }
            manifest.state = .queued
            manifest.nextAttemptAt = nil
            manifest.storedAs = spool.storedAs(path, in: .retry)
            // The record names the outbox name it goes to: a hook's run and retention find the
            // record of a move from there by it.
            manifest.setOutboxPath(target)
            if resetBackoff { manifest.attemptsBeforeRetry = manifest.attempts.count }
            // Durable in retry/ before its outbox name exists: without a journal, a power cut could
            // otherwise keep the outbox's `queued` record and bring back the old `failed` one in
            // retry/, which would then outlive its file there.
            try spool.writeManifest(manifest, for: path, in: .retry, syncDirectory: true)
            try makeDurableParents(of: target, in: .outbox)
            try link(Spool.manifestName(for: path), in: retryDir, to: Spool.manifestName(for: target), in: outbox)
            try spool.syncDirectory(of: target, in: .outbox)
        }
        if fileHere {
            do {
                do {
                    try link(path, in: retryDir, to: target, in: outbox)
                    try spool.syncDirectory(of: target, in: .outbox)
                    try fs.unlink(path, in: retryDir)
                } catch let error as SystemError where error.code == .notPermitted {
                    // Another user's file we may neither link nor read (as in `moveTogether`): renamed.
                    try fs.rename(path, in: retryDir, to: target, in: outbox, replace: false)
                    try spool.syncDirectory(of: target, in: .outbox)
                }
            } catch let error as SystemError where error.code == .exists {
                // A producer dropped another file under the name after our record got there: our
                // record's name goes again (left beside that file, its claim would take it for the
                // file's own, key and resumable upload included), and the move starts over, to a free name.
                guard try dropRecordLinkedBack(path, to: target) else { throw error }
                return try moveBack(fromRetry: path, resetBackoff: resetBackoff)
            }
            try spool.syncDirectory(of: path, in: .retry)
        }
        try fs.unlink(Spool.manifestName(for: path), in: retryDir)
        // Else a power cut could bring this `queued` record back to retry/ long after its file left.
        try spool.syncDirectory(of: path, in: .retry)
        return target
    }
}
