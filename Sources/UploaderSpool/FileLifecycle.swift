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
        try spool.prepareManifest(Self.attemptRecord(of: file, now: now), for: file.path, in: .outbox)
    }

    /// `prepareAttempt` of several claimed files at once: their fsyncs share journal commits
    /// (`Spool.prepareManifests`). Each answers on its own, in order.
    package func prepareAttempts(_ files: [ClaimedFile], now: Date) -> [Result<Spool.PreparedManifest, any Error>] {
        spool.prepareManifests(files.map { (Self.attemptRecord(of: $0, now: now), $0.path) })
    }

    /// Step 1's record of `file`: `uploading`, a new attempt begun `now` (one left open closed as interrupted).
    private static func attemptRecord(of file: ClaimedFile, now: Date) -> Manifest {
        var manifest = file.manifest
        manifest.closeOpenAttempt(at: now, interrupted: true)
        manifest.state = .uploading
        manifest.nextAttemptAt = nil
        manifest.attempts.append(Manifest.Attempt(startedAt: Timestamp.format(now)))
        return manifest
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
                        unchanged: (() throws -> String?)? = nil, recorded: () -> Void = {}) throws -> RelativePath {
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
                          unchanged: (() throws -> String?)?, recorded: () -> Void) throws -> RelativePath {
        var move = try recordFinal(path, manifest: original, to: area, live: unchanged != nil)
        move.file = file
        recorded()
        return try keepFiling(move, original: original, unchanged: unchanged, namesTaken: 0)
    }

    /// Steps 3–5 of `move`, its record in place (`recordFinal`), through the batch of moves that
    /// finish together; a name taken meanwhile (`namesTaken` so far) is chosen again.
    func keepFiling(_ first: PendingMove, original: Manifest, unchanged: (() throws -> String?)?, namesTaken taken: Int) throws -> RelativePath {
        var move = first
        var namesTaken = taken
        while true {
            do {
                let fileHere = try moves.run(move) { batch in moveTogether(batch) }
                try endMove(move, fileHere: fileHere, unchanged: unchanged)
                return move.target
            } catch let taken as TargetTaken where SpoolMoves.choosesAnotherName(afterTaken: namesTaken + 1) {
                namesTaken += 1
                logger.debug("the name chosen in \(move.area.rawValue)/ was taken meanwhile; the next free one is used",
                             ["file": move.path.logSafe, "taken": taken.target.logSafe])
                let file = move.file
                move = try recordFinal(move.path, manifest: original, to: move.area, live: unchanged != nil)
                move.file = file
            }
        }
    }

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
        let target = try freeName(for: path, in: area)
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
                              unchanged: (() throws -> String?)? = nil, file: FileSystem.Status? = nil) throws {
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
    func endMove(_ move: PendingMove, fileHere: Bool, unchanged: (() throws -> String?)?) throws {
        if fileHere, let change = try unchanged?() {
            // Back to the outbox (beside a new file under its name, if one took it), record after file.
            try plan { disk throws(PlanStop) in
                try SpoolMoves.bringBackChanged(move.path, id: move.manifest.id, from: SpoolPlace(move.area, move.target), change: change,
                                                on: &disk)
            }
        }
        try endPlanned(move.path, manifest: move.manifest, to: move.area, as: move.target, namesMayBeUnsynced: false)
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

    /// Runs a planner over this spool's interpreter; a stop is thrown as the error it stands for.
    func plan<T>(now: Date? = nil, heldFacts: (() throws -> FileFacts)? = nil, heldFile: (fd: Int32, status: FileSystem.Status)? = nil,
                 _ body: (inout DiskStepPerformer) throws(PlanStop) -> T) throws -> T {
        var performer = DiskStepPerformer(lifecycle: self, moves: [], now: now, heldFacts: heldFacts, heldFile: heldFile)
        do throws(PlanStop) {
            return try body(&performer)
        } catch {
            throw performer.error(of: error)
        }
    }

    /// Runs a planner that ends on its own (its failures are outcomes, said in the log).
    func run<T>(now: Date? = nil, _ body: (inout DiskStepPerformer) -> T) -> T {
        var performer = DiskStepPerformer(lifecycle: self, moves: [], now: now)
        return body(&performer)
    }

    /// A name in `area` no file, record or waiting adoption has (`SpoolMoves.freeName`); a name
    /// the disk will not show is an error, never passed over.
    package func freeName(for path: RelativePath, in area: Spool.Area) throws -> RelativePath {
        try plan { disk throws(PlanStop) in try SpoolMoves.freeName(SpoolPlace(area, path), on: &disk) }
    }

    /// `SpoolMoves.dropSecondNames` for the place the record's `stored_as` names.
    package func dropSecondNames(of path: RelativePath, recordedAs stored: String?) throws {
        guard let stored, let (area, target) = spool.resolveStoredAs(stored) else { return }
        try plan { disk throws(PlanStop) in try SpoolMoves.dropSecondNames(of: path, at: SpoolPlace(area, target), on: &disk) }
    }

    /// True when both names lead to one file (same device and inode); false when either name is
    /// absent. Any other failure is thrown (what cannot be looked at is never taken for another file).
    package func sameFileIfPresent(_ a: RelativePath, in aDir: String, _ b: RelativePath, in bDir: String) throws -> Bool {
        guard let sa = try fs.statusIfPresent(a, in: aDir), let sb = try fs.statusIfPresent(b, in: bDir) else { return false }
        return sa.inode == sb.inode && sa.device == sb.device
    }

    /// `SpoolMoves.holdsOwnRecord`.
    package func holdsOwnRecord(_ file: RelativePath, manifest: Manifest, at target: RelativePath, in area: Spool.Area) throws -> Bool {
        try plan { disk throws(PlanStop) in try SpoolMoves.holdsOwnRecord(file, manifest: manifest, at: SpoolPlace(area, target), on: &disk) }
    }

    /// `SpoolMoves.requeueIfChangedAfterUpload`.
    package func requeueIfChangedAfterUpload(_ file: RelativePath, manifest: Manifest, in area: Spool.Area,
                                            as target: RelativePath) throws -> Requeued? {
        try plan { disk throws(PlanStop) in
            try SpoolMoves.requeueIfChangedAfterUpload(file, manifest: manifest, at: SpoolPlace(area, target), on: &disk)
        }
    }

    /// Where `requeueIfChangedAfterUpload` put a changed file back in the outbox.
    package typealias Requeued = UploaderDecisions.Requeued

    /// `SpoolMoves.bringBack`: the file at `path` in `area` gets its outbox name `file` back.
    package func bringBack(_ path: RelativePath, from area: Spool.Area, to file: RelativePath) throws {
        try plan { disk throws(PlanStop) in try SpoolMoves.bringBack(SpoolPlace(area, path), to: file, on: &disk) }
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

    /// Steps 6–8 (`SpoolMoves.moveBack`): puts a file from retry/ back into the outbox as `queued`.
    /// `resetBackoff` (for `uploader retry`) starts the attempt count and the backoff afresh; the history stays.
    @discardableResult
    package func moveBack(fromRetry path: RelativePath, resetBackoff: Bool) throws -> RelativePath {
        let naming = spool.storedAsNaming
        return try plan { disk throws(PlanStop) in
            try SpoolMoves.moveBack(fromRetry: path, resetBackoff: resetBackoff, naming: naming, on: &disk)
        }
    }

    /// Whether the move that filed the file at `path` in `area` is unfinished, so that its due hook
    /// waits for the claim that finishes it (`SpoolMoves.moveUnfinished`).
    package func moveUnfinished(filedAt path: RelativePath, in area: Spool.Area, manifest: Manifest) -> Bool {
        let naming = spool.storedAsNaming
        return run { disk in SpoolMoves.moveUnfinished(filedAt: SpoolPlace(area, path), manifest: manifest, naming: naming, on: &disk) }
    }

    /// The record of `path` in retry/, settled as start-up does (`SpoolMoves.settleRetryRecord`):
    /// due, moved back, due now after a move back that failed, or moved aside.
    package func settleRetryRecord(_ path: RelativePath, now: Date) -> RetryRecordSettlement {
        let naming = spool.storedAsNaming
        return run(now: now) { disk in SpoolMoves.settleRetryRecord(path, naming: naming, on: &disk) }
    }
}
