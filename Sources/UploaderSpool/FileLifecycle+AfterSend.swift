import Foundation
import UploaderSupport
import UploaderConfig
import UploaderDecisions

/// `after_send = delete`: a delivered file and its manifest leave sent/ once the move is done and
/// its `on_sent` hook (if any) has run, with the order of writes that lets recovery finish a
/// deletion cut at any point — found without reading sent/:
///
/// - No hook due: in step 5 of the move, before the outbox record goes, the file's name in sent/
///   is unlinked and sent/ fsynced, then the manifest's the same way; only then the outbox record. A crash
///   before the record goes leaves it in the outbox (scanned at every start), naming the file in
///   sent/: recovery finishes the move and the deletion (`dropOutboxRecord`), or, when the file
///   has already left sent/, the rest (`finishDeletion`). The file goes first, so a record alone
///   in sent/ is never taken for a move still to be finished (which would count it again).
/// - A hook due: the move ends as with `keep` (the hook's marker in `.hooks-due/` is written
///   before the manifest reaches sent/); the hook runs with the final paths, its run is recorded,
///   and then `DueHookRun` removes the file and its manifest, fsyncs sent/, and only then drops
///   the marker. A crash before that leaves the marker: start-up runs the hook again if its run
///   was not recorded (at least once), or only the deletion if it was.
///
/// The deliveries stay counted: the `SentLedger` line is written as the manifest reaches sent/.
extension FileLifecycle {
    /// True when this move's file leaves sent/ in step 5 itself: `delete`, a delivery, and no hook
    /// due (a hook's run removes the file after it).
    package func deletesAfterMove(_ manifest: Manifest, in area: Spool.Area) -> Bool {
        SpoolMoves.deletesAfterMove(manifest, in: area, afterSendDeletes: afterSend == .delete)
    }

    /// Unlinks a delivered file from sent/ and then its manifest, each made durable (fsync of sent/)
    /// before the next step: a manifest gone means its file is gone, whatever a power cut keeps
    /// (without a journal each name persists on its own), and both are gone before whatever tells
    /// recovery the deletion was due (the outbox record, a hook marker) goes. A file left alone by a
    /// power cut would be no one's: no record, and start-up drops a marker whose manifest is gone.
    package func removeDelivered(_ target: RelativePath) throws {
        try plan { disk throws(PlanStop) in try SpoolMoves.removeDelivered(SpoolPlace(.sent, target), on: &disk) }
    }

    /// `removeDelivered` for a file filed in sent/ earlier (its hook has run since): bytes there
    /// that are not what was sent go back to the outbox first (`SpoolMoves.removeDelivered`).
    package func removeDelivered(_ target: RelativePath, sent manifest: Manifest) throws {
        let cameBack = try plan { disk throws(PlanStop) in
            try SpoolMoves.removeDelivered(SpoolPlace(.sent, target), sent: manifest, on: &disk)
        }
        if let cameBack {
            logger.warn("the file in sent/ is not what was sent; it goes back to the outbox to be sent again",
                        ["file": target.logSafe, "id": manifest.id, "queued_as": cameBack.queuedAs.logSafe,
                         "size": "\(cameBack.size)", "size_sent": "\(manifest.size)"])
        }
    }

    /// Step 5 alone, for a move cut after step 4 (the file and its record have their names in
    /// `area`; the record's outbox name is left): those names made durable first (the move may
    /// have been cut before its fsyncs, kill -9), the deletion due with `after_send = delete`,
    /// then the outbox name goes.
    /// So may the removal of the file's outbox name be: durable before the record's goes, or a
    /// power cut could bring the file back alone (`MoveEndPlan`).
    package func dropOutboxRecord(of path: RelativePath, manifest: Manifest, movedTo target: RelativePath,
                                  in area: Spool.Area) throws {
        try endPlanned(path, manifest: manifest, to: area, as: target, namesMayBeUnsynced: true)
    }

}

extension FileLifecycle {
    /// What became of the record of a file that has left both the outbox and the place it names.
    package typealias LeftFileRecord = UploaderDecisions.LeftFileRecord

    /// Settles the record at `path` in the outbox whose file is not there (gone, or another entry
    /// under the name) and has left the place the record names (`SpoolMoves.settleRecordOfLeftFile`).
    package func settleRecordOfLeftFile(_ path: RelativePath, manifest: Manifest) -> LeftFileRecord {
        let naming = spool.storedAsNaming, deletes = afterSend == .delete
        return run { disk in
            SpoolMoves.settleRecordOfLeftFile(path, manifest: manifest, naming: naming, afterSendDeletes: deletes, on: &disk)
        }
    }

    /// A record in the outbox whose file is not beside it, settled as start-up does
    /// (`SpoolMoves.settleOrphan`); `now` names a record moved aside.
    package func settleOrphan(_ path: RelativePath, now: Date) -> OrphanSettlement {
        let naming = spool.storedAsNaming, deletes = afterSend == .delete
        return run(now: now) { disk in SpoolMoves.settleOrphan(path, naming: naming, afterSendDeletes: deletes, on: &disk) }
    }
}
