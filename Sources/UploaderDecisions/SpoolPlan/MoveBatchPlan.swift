import UploaderValues

/// The disk operations of moves that finish together, as data: the crash contract's step 2
/// fsync, then steps 3 and 4 for every move of the batch, each directory fsynced once per step
/// for all of them (`DiskStep.syncDirectory` serves several moves). The spool's interpreter asks
/// `next()` for a step, performs it and hands the outcome to `took(_:)`; the plan alone decides
/// what follows — a name found taken, a link refused for another user's file, a directory fsync
/// refused — so every decision is covered by the plan's table tests, and a failure stops only the
/// moves the failed step served.
///
/// The order, per move: (record durable in the outbox) → the file's and the record's new names
/// → their directory fsynced → the file's outbox name unlinked (only while it still leads to the
/// file linked) → the outbox fsynced. At every prefix each of the file and its record has a
/// durable name, whatever a power cut keeps (start-up recovery finishes the rest, see
/// `MoveEndPlan` and the table tests). Debug builds check that order as each step is handed out.
package struct MoveBatchPlan: Sendable {
    package let moves: [PlannedMove]
    /// Each move's end so far: `.moved` while it is going.
    package var results: [MoveResult] {
        moves.indices.map { failures[$0].map(MoveResult.failed) ?? .moved(fileHere: moveState[$0].fileHere) }
    }
    private var failures: [MoveFailure?]

    private var phase = Phase.syncRecords
    /// Grouped steps of the current phase, not yet handed out.
    private var queue: [DiskStep] = []
    private var queued = false
    /// The step handed out, awaiting its outcome.
    private var outstanding: DiskStep?
    private var moveState: [MoveState]

    package init(_ moves: [PlannedMove]) {
        self.moves = moves
        failures = Array(repeating: nil, count: moves.count)
        moveState = moves.map { MoveState(stage: $0.target.parent == nil ? .lookUpFile : .parents) }
    }

    /// The phases, in the crash contract's order.
    private enum Phase: Equatable {
        case syncRecords
        case linking(Int)
        case syncTargets
        case ledger
        case unlinkOutbox(Int)
        case syncOutbox
        case finished
    }

    /// Where one move is within its link phase and after.
    private struct MoveState: Sendable {
        var stage: LinkStage
        /// The file the outbox name led to when it was linked.
        var linked: FileIdentity?
        var fileHere = false
        /// Renamed rather than linked: no outbox name is left to unlink.
        var renamed = false
        /// How often a link found its name taken, then freed when looked at.
        var freed = 0
        /// What `target` held when a link was refused with EEXIST.
        var there: FileIdentity?
        var recordDurableInOutbox = false
        var namesDurable = false
        var outboxNameGone = false
        /// The record's link in the target area made a new name (not one an earlier, cut run made).
        var recordIsNew = false
    }

    private enum LinkStage: Sendable {
        case parents, lookUpFile, lookUpTarget, hook, linkFile, fileTakenTarget, fileTakenSource, renameFile
        case linkRecord, recordTakenTarget, recordTakenSource, done
        case lookUpBeforeUnlink, unlinkFile, unlinked
    }

    /// Whether the move at `index` has not failed.
    package func going(_ index: Int) -> Bool { failures[index] == nil }

    /// The next step to perform, or nil when the batch is through (read `results`).
    package mutating func next() -> DiskStep? {
        precondition(outstanding == nil, "a step's outcome is still due")
        while true {
            if let step = stepOfPhase() {
                checkOrder(step)
                outstanding = step
                return step
            }
            guard advance() else { return nil }
        }
    }

    /// The outcome of the step `next()` handed out last.
    package mutating func took(_ outcome: StepOutcome) {
        guard let step = outstanding else { preconditionFailure("an outcome with no step handed out") }
        outstanding = nil
        switch phase {
        case .linking(let index): tookLinking(index, step, outcome)
        case .unlinkOutbox(let index): tookUnlinking(index, outcome)
        case .syncRecords, .syncTargets, .syncOutbox, .ledger, .finished:
            for move in step.moves where going(move) {
                if case .refused = outcome, phase != .ledger { fail(move, .refused); continue }
                switch phase {
                case .syncRecords: moveState[move].recordDurableInOutbox = true
                case .syncTargets: moveState[move].namesDurable = true
                default: break
                }
            }
        }
    }

    // MARK: Phases

    /// The step the current phase hands out next, or nil when the phase is through.
    private mutating func stepOfPhase() -> DiskStep? {
        switch phase {
        case .syncRecords:
            fillQueue { plan in
                plan.groupedSyncs(of: { $0.move.recordFirst ? SpoolPlace(.outbox, $0.move.path) : nil })
            }
            return queue.isEmpty ? nil : queue.removeFirst()
        case .syncTargets:
            fillQueue { plan in plan.groupedSyncs(of: { $0.targetFile }) }
            return queue.isEmpty ? nil : queue.removeFirst()
        case .syncOutbox:
            fillQueue { plan in
                plan.groupedSyncs(of: { move in move.fileHereAfterLinks ? SpoolPlace(.outbox, move.move.path) : nil })
            }
            return queue.isEmpty ? nil : queue.removeFirst()
        case .ledger:
            fillQueue { plan in
                let delivered = plan.moves.indices.filter { plan.going($0) && plan.moveState[$0].recordIsNew && plan.moves[$0].delivery }
                return delivered.isEmpty ? [] : [.recordDeliveries(delivered.map { plan.moves[$0].manifest }, moves: delivered)]
            }
            return queue.isEmpty ? nil : queue.removeFirst()
        case .linking(let index):
            return going(index) ? linkingStep(index) : nil
        case .unlinkOutbox(let index):
            return going(index) ? unlinkingStep(index) : nil
        case .finished:
            return nil
        }
    }

    /// Moves to the next phase (or the next move of a per-move phase); false once finished.
    private mutating func advance() -> Bool {
        queue = []
        queued = false
        switch phase {
        case .syncRecords: phase = moves.isEmpty ? .syncTargets : .linking(0)
        case .linking(let index): phase = index + 1 < moves.count ? .linking(index + 1) : .syncTargets
        case .syncTargets: phase = .ledger
        case .ledger: phase = moves.isEmpty ? .syncOutbox : .unlinkOutbox(0)
        case .unlinkOutbox(let index): phase = index + 1 < moves.count ? .unlinkOutbox(index + 1) : .syncOutbox
        case .syncOutbox: phase = .finished
        case .finished: return false
        }
        if case .unlinkOutbox(let index) = phase, going(index) { moveState[index].stage = .lookUpBeforeUnlink }
        return true
    }

    private mutating func fillQueue(_ make: (MoveBatchPlan) -> [DiskStep]) {
        guard !queued else { return }
        queued = true
        queue = make(self)
    }

    /// One fsync per directory that the going moves' `place` names, in the order of the first move
    /// that names each, serving every move that names it.
    private func groupedSyncs(of place: (MoveView) -> SpoolPlace?) -> [DiskStep] {
        var order: [SpoolDirectory] = []
        var served: [SpoolDirectory: (SpoolPlace, [Int])] = [:]
        for index in moves.indices where going(index) {
            guard let place = place(MoveView(move: moves[index], state: moveState[index])) else { continue }
            let directory = place.directory
            if served[directory] == nil { order.append(directory); served[directory] = (place, []) }
            served[directory]!.1.append(index)
        }
        return order.map { .syncDirectory(served[$0]!.0, moves: served[$0]!.1) }
    }

    /// A move as `groupedSyncs` looks at it.
    private struct MoveView {
        var move: PlannedMove
        var state: MoveState
        var targetFile: SpoolPlace { move.targetFile }
        var fileHereAfterLinks: Bool { state.fileHere }
    }

    private mutating func fail(_ index: Int, _ failure: MoveFailure) {
        failures[index] = failure
    }

    // MARK: Step 3: the new names

    private func linkingStep(_ index: Int) -> DiskStep? {
        let move = moves[index], state = moveState[index]
        switch state.stage {
        case .parents: return .makeParents(move.targetFile, move: index)
        case .lookUpFile: return .lookUp(move.outboxFile, move: index)
        case .lookUpTarget: return .lookUp(move.targetFile, move: index)
        case .hook: return .markHookDue(move.manifest, at: move.targetFile, move: index)
        case .linkFile: return .link(move.outboxFile, to: move.targetFile, move: index)
        case .fileTakenTarget: return .lookUp(move.targetFile, move: index)
        case .fileTakenSource: return .lookUp(move.outboxFile, move: index)
        case .renameFile: return .rename(move.outboxFile, to: move.targetFile, move: index)
        case .linkRecord: return .link(move.outboxFile.record, to: move.targetFile.record, move: index)
        case .recordTakenTarget: return .lookUp(move.targetFile.record, move: index)
        case .recordTakenSource: return .lookUp(move.outboxFile.record, move: index)
        case .done, .lookUpBeforeUnlink, .unlinkFile, .unlinked: return nil
        }
    }

    /// How many times a link tries again a name that keeps being freed right after refusing it.
    static let linkTriesOnAFreedName = 3

    private mutating func tookLinking(_ index: Int, _ step: DiskStep, _ outcome: StepOutcome) {
        let move = moves[index]
        var state = moveState[index]
        defer { moveState[index] = state }
        func linkRecordNext() {
            state.freed = 0
            state.stage = .linkRecord
        }
        if case .refused(let refusal) = outcome {
            switch (state.stage, refusal) {
            case (.linkFile, .exists): state.stage = .fileTakenTarget
            case (.linkFile, .notPermitted):
                // Another user's file we may neither link nor read: it can only be renamed. As safe
                // on a journalled file system; without a journal a power cut here could lose its name.
                state.stage = .renameFile
            case (.renameFile, .exists): fail(index, .targetTaken(move.target))
            case (.linkRecord, .exists): state.stage = .recordTakenTarget
            default: fail(index, .refused)
            }
            return
        }
        switch (state.stage, outcome) {
        case (.parents, .done):
            state.stage = .lookUpFile
        case (.lookUpFile, .found(let named)):
            // An outbox name that leads to another file than the one held is no name of this file.
            var file = named
            if let held = move.heldFile, file != held { file = nil }
            state.linked = file
            state.fileHere = file != nil
            if file != nil {
                state.stage = move.hookDue ? .hook : .linkFile
            } else if move.live {
                // The producer took the file away after its upload: a live move files nothing.
                fail(index, .removedFromOutbox)
            } else {
                state.stage = .lookUpTarget
            }
        case (.lookUpTarget, .found(let there)):
            // Recovery, the file gone from the outbox: the move goes on only if it has its new name.
            if there == nil { fail(index, .removedFromOutbox) } else if move.hookDue { state.stage = .hook } else { linkRecordNext() }
        case (.hook, .done):
            if state.fileHere { state.stage = .linkFile } else { linkRecordNext() }
        case (.linkFile, .done):
            linkRecordNext()
        case (.renameFile, .done):
            state.renamed = true
            linkRecordNext()
        case (.fileTakenTarget, .found(let there)):
            if let there {
                state.there = there
                state.stage = .fileTakenSource
            } else if state.freed + 1 < Self.linkTriesOnAFreedName {
                // Freed right after refusing (retention deleting a copy a cut move left): again.
                state.freed += 1
                state.stage = .linkFile
            } else {
                fail(index, .targetTaken(move.target))
            }
        case (.fileTakenSource, .found(let mine)):
            // A name that already leads to this very file counts as made (a move run again).
            if mine != nil && mine == state.there { linkRecordNext() } else { fail(index, .targetTaken(move.target)) }
        case (.linkRecord, .done):
            state.recordIsNew = true
            state.stage = .done
        case (.recordTakenTarget, .found(let there)):
            if let there {
                state.there = there
                state.stage = .recordTakenSource
            } else if state.freed + 1 < Self.linkTriesOnAFreedName {
                state.freed += 1
                state.stage = .linkRecord
            } else {
                fail(index, .refused)
            }
        case (.recordTakenSource, .found(let mine)):
            if mine != nil && mine == state.there { state.stage = .done } else { fail(index, .refused) }
        default:
            preconditionFailure("outcome \(outcome) of \(step) in link stage \(state.stage)")
        }
    }

    // MARK: Step 4: the file's outbox name goes

    private func unlinkingStep(_ index: Int) -> DiskStep? {
        let move = moves[index], state = moveState[index]
        guard state.fileHere, !state.renamed, state.linked != nil else { return nil }
        switch state.stage {
        case .done: return nil
        case .lookUpBeforeUnlink: return .lookUp(move.outboxFile, move: index)
        case .unlinkFile: return .unlink(move.outboxFile, move: index)
        default: return nil
        }
    }

    private mutating func tookUnlinking(_ index: Int, _ outcome: StepOutcome) {
        var state = moveState[index]
        defer { moveState[index] = state }
        switch (state.stage, outcome) {
        case (_, .refused):
            fail(index, .refused)
        case (.lookUpBeforeUnlink, .found(let now)):
            // Only while the name still leads to the file linked: another finisher of the same move
            // may have taken it away since, and the producer put a new file there.
            state.stage = now == state.linked ? .unlinkFile : .unlinked
        case (.unlinkFile, .done):
            state.outboxNameGone = true
            state.stage = .unlinked
        default:
            preconditionFailure("outcome \(outcome) in unlink stage \(state.stage)")
        }
    }

    // MARK: The crash contract, checked

    /// Debug builds: each step keeps the durable order. A file's outbox name never goes before its
    /// new name and its record's are durable; nothing moves before a just-written record is durable.
    private func checkOrder(_ step: DiskStep) {
        switch step {
        case .link(let from, _, let move), .rename(let from, _, let move):
            assert(!moves[move].recordFirst || moveState[move].recordDurableInOutbox,
                   "\(from) gets a new name before its final record is durable in the outbox")
        case .unlink(let place, let move):
            assert(moveState[move].namesDurable, "\(place) unlinked before its new names are durable")
            assert(place.kind == .file && place.area == .outbox, "the batch unlinks only a file's outbox name")
        case .recordDeliveries(_, let delivered):
            assert(delivered.allSatisfy { moveState[$0].namesDurable }, "a delivery counted before its record's name in sent/ is durable")
        case .syncDirectory, .makeParents, .lookUp, .markHookDue, .inspect, .readRecord, .writeRecord,
             .quarantineRecord, .note, .inspectHeld, .lookUpHookDue, .mayLink, .copyHeld, .exchange, .renameOver, .sameBytes:
            break
        }
    }
}
