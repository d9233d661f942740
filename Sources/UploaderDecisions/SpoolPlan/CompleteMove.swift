import UploaderValues

/// Moves planned over `DiskSteps` as one sequence of steps, for a planner that needs a whole
/// move inside its own plan (a move back finishing a cut move into retry/ first).
package enum SpoolMoves {
    /// Steps 3–5 alone, for a move whose final record is already durable in the outbox (recovery
    /// runs them again on whatever a crash left): `MoveBatchPlan` for this one move, then its end.
    package static func completeMove<D: DiskSteps>(_ path: RelativePath, manifest: Manifest, to area: SpoolArea, as target: RelativePath,
                                                   deletesAfter: Bool, on disk: inout D) throws(PlanStop) {
        var batch = MoveBatchPlan([PlannedMove(path: path, manifest: manifest, area: area, target: target, live: false, recordFirst: false)])
        while let step = batch.next() { batch.took(disk.perform(step)) }
        switch batch.results[0] {
        case .moved: break
        case .failed(.targetTaken(let taken)): throw .targetTaken(taken)
        case .failed(.removedFromOutbox): throw .changedDuringMove("removed from the outbox", broughtBackAs: nil)
        case .failed(.refused): throw .refused(.other)
        }
        try endMove(path, area: area, target: target, deletesAfter: deletesAfter, namesMayBeUnsynced: false, on: &disk)
    }

    /// `MoveEndPlan` over `DiskSteps`.
    package static func endMove<D: DiskSteps>(_ path: RelativePath, area: SpoolArea, target: RelativePath, deletesAfter: Bool,
                                              namesMayBeUnsynced: Bool, on disk: inout D) throws(PlanStop) {
        var end = MoveEndPlan(path: path, area: area, target: target, deletesAfter: deletesAfter, namesMayBeUnsynced: namesMayBeUnsynced)
        while let step = end.next() { end.took(disk.perform(step)) }
        if end.failure != nil { throw .refused(.other) }
    }

    /// True when a move's file leaves sent/ in its last step itself: `after_send = delete`, a
    /// delivery, and no hook due (a hook's run removes the file after it).
    package static func deletesAfterMove(_ manifest: Manifest, in area: SpoolArea, afterSendDeletes: Bool) -> Bool {
        afterSendDeletes && area == .sent && manifest.state == .sent && manifest.dueHook == nil
    }
}
