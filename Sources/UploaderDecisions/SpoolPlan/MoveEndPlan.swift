import UploaderValues

/// The crash contract's step 5 as data: the last of a move, once the file and its record have
/// their new names (`MoveBatchPlan`) and the file is known unchanged. With `after_send = delete`
/// the file's and then the record's names in sent/ go first, each durably; the record's outbox
/// name goes last, so until the very end the outbox record tells start-up what was due.
///
/// `namesMayBeUnsynced` is recovery's case (a move cut after its links, maybe before their fsyncs,
/// kill -9): the new names and the file's outbox removal are made durable before anything goes.
package struct MoveEndPlan: Sendable {
    package let path: RelativePath
    package let area: SpoolArea
    package let target: RelativePath
    package let deletesAfter: Bool
    package let namesMayBeUnsynced: Bool
    /// Nil while going; the failure that ended it otherwise.
    package private(set) var failure: MoveFailure?

    private var stage: Stage
    private var outstanding: DiskStep?
    private var removalsDurable = true

    private enum Stage: Sendable {
        case syncTarget, syncOutbox, lookUpFile, unlinkFile, syncFileRemoval, lookUpRecord, unlinkRecord, syncRecordRemoval
        case unlinkOutboxRecord, finished
    }

    package init(path: RelativePath, area: SpoolArea, target: RelativePath, deletesAfter: Bool, namesMayBeUnsynced: Bool) {
        precondition(!deletesAfter || area == .sent, "only a delivery leaves sent/ after its move")
        self.path = path
        self.area = area
        self.target = target
        self.deletesAfter = deletesAfter
        self.namesMayBeUnsynced = namesMayBeUnsynced
        stage = namesMayBeUnsynced ? .syncTarget : deletesAfter ? .lookUpFile : .unlinkOutboxRecord
    }

    private var targetFile: SpoolPlace { SpoolPlace(area, target) }

    /// The next step, or nil when the move is over (or `failure` says why it stopped).
    package mutating func next() -> DiskStep? {
        precondition(outstanding == nil, "a step's outcome is still due")
        guard failure == nil else { return nil }
        let step: DiskStep
        switch stage {
        case .syncTarget: step = .syncDirectory(targetFile, moves: [0])
        case .syncOutbox: step = .syncDirectory(SpoolPlace(.outbox, path), moves: [0])
        case .lookUpFile: step = .lookUp(targetFile, move: 0)
        case .unlinkFile: step = .unlink(targetFile, move: 0)
        case .syncFileRemoval, .syncRecordRemoval: step = .syncDirectory(targetFile, moves: [0])
        case .lookUpRecord: step = .lookUp(targetFile.record, move: 0)
        case .unlinkRecord: step = .unlink(targetFile.record, move: 0)
        case .unlinkOutboxRecord:
            // Whatever tells recovery that a deletion was due goes only once the deletion is durable.
            assert(removalsDurable, "the outbox record goes before the deletion in sent/ is durable")
            step = .unlink(SpoolPlace(.outbox, path, .record), move: 0)
        case .finished: return nil
        }
        outstanding = step
        return step
    }

    package mutating func took(_ outcome: StepOutcome) {
        guard outstanding != nil else { preconditionFailure("an outcome with no step handed out") }
        outstanding = nil
        switch (stage, outcome) {
        case (.unlinkOutboxRecord, .refused(.noEntry)) where !namesMayBeUnsynced:
            // A rescan met this move with its record in place and dropped the old name itself
            // (recovery's own step 5): the move is done all the same.
            stage = .finished
        case (_, .refused):
            failure = .refused
        case (.syncTarget, .done): stage = .syncOutbox
        case (.syncOutbox, .done): stage = deletesAfter ? .lookUpFile : .unlinkOutboxRecord
        case (.lookUpFile, .found(let there)): stage = there == nil ? .lookUpRecord : .unlinkFile
        case (.unlinkFile, .done):
            removalsDurable = false
            stage = .syncFileRemoval
        case (.syncFileRemoval, .done):
            removalsDurable = true
            stage = .lookUpRecord
        case (.lookUpRecord, .found(let there)): stage = there == nil ? .unlinkOutboxRecord : .unlinkRecord
        case (.unlinkRecord, .done):
            removalsDurable = false
            stage = .syncRecordRemoval
        case (.syncRecordRemoval, .done):
            removalsDurable = true
            stage = .unlinkOutboxRecord
        case (.unlinkOutboxRecord, .done): stage = .finished
        default: preconditionFailure("outcome \(outcome) in end-of-move stage \(stage)")
        }
    }
}
