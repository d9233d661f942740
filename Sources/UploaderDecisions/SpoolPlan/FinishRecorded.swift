import UploaderValues

/// A claim finding a record in a final state beside its file: the move the record names was
/// cut, and is finished now, planned over `DiskSteps`.
extension SpoolMoves {
    /// Completes the move the outbox record `manifest` of `path` names (steps 3–5), for the file
    /// the claim holds (`file`): into the record's own place when that is free or already a name
    /// of this very file, else under a free name the record is rewritten with first (durably, as
    /// a crash may have cut its write before the outbox fsync). A delivery's file is checked
    /// unchanged once it has its new name (a producer writing in place would change the copy in
    /// sent/ too): changed, it goes back and the plan stops with `changedDuringMove`. Into retry/
    /// under the retry-move lock, stopping with `recordChangedMeanwhile` when `uploader retry`
    /// replaced the record meanwhile. Returns where the file is.
    package static func finishRecorded<D: DiskSteps>(_ path: RelativePath, manifest: Manifest, file: FileIdentity, naming: StoredAsNaming,
                                                     afterSendDeletes: Bool, on disk: inout D) throws(PlanStop) -> SpoolPlace {
        let area: SpoolArea = manifest.state == .sent ? .sent : .retry
        func finish(_ disk: inout D) throws(PlanStop) -> SpoolPlace {
            let outboxFile = SpoolPlace(.outbox, path)
            if area == .retry, disk.readRecord(outboxFile).manifest != manifest { throw .recordChangedMeanwhile }
            var target = try freeName(SpoolPlace(area, path), on: &disk)
            if let stored = manifest.storedAs.flatMap(naming.place), stored.area == area {
                // Free, or already a name of this very file (the move was cut after its link) —
                // known by the claim's descriptor, not by the outbox name a producer may remove now.
                let there = try disk.lookUp(stored)
                if there == nil || there == file { target = stored.path }
            }
            var updated = manifest
            updated.storedAs = naming.storedAs(SpoolPlace(area, target))
            // The record must be durable in the outbox before the file gets a new name.
            if updated != manifest {
                try disk.run(.writeRecord(updated, at: outboxFile.record, syncDirectory: true))
            } else {
                try disk.syncDirectory(of: outboxFile)
            }
            let delivery = manifest.state == .sent
            var batch = MoveBatchPlan([PlannedMove(path: path, manifest: updated, area: area, target: target, live: delivery,
                                                   recordFirst: false, heldFile: file)])
            while let step = batch.next() { batch.took(disk.perform(step)) }
            let fileHere: Bool
            switch batch.results[0] {
            case .moved(let here): fileHere = here
            case .failed(.targetTaken(let taken)): throw .targetTaken(taken)
            case .failed(.removedFromOutbox): throw .changedDuringMove("removed from the outbox", broughtBackAs: nil)
            case .failed(.refused): throw .refused(.other)
            }
            let placed = SpoolPlace(area, target)
            if delivery && fileHere {
                let change: String?
                switch disk.perform(.inspectHeld) {
                case .facts(let now?): change = now.isVersion(of: manifest) ? nil : "modified"
                default: change = "cannot stat it"
                }
                if let change { try bringBackChanged(path, id: manifest.id, from: placed, change: change, on: &disk) }
            }
            try endMove(path, area: area, target: target, deletesAfter: deletesAfterMove(updated, in: area, afterSendDeletes: afterSendDeletes),
                        namesMayBeUnsynced: false, on: &disk)
            disk.note(PlanNote(.info, "finished an interrupted move", ["file": path.logSafe, "id": manifest.id, "stored_as": updated.storedAs ?? ""]))
            return placed
        }
        return try area == .retry ? disk.underRetryMoveLock(exclusive: false, finish) : finish(&disk)
    }
}
