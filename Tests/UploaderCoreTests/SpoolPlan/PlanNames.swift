import UploaderDecisions
import UploaderValues

/// A plan's steps performed on names alone: which file each place leads to. What the table tests
/// of the spool's plans run them on; `refuse` makes a chosen step fail as the disk would.
struct PlanNames {
    var names: [SpoolPlace: FileIdentity] = [:]
    /// Every step performed, in order.
    var performed: [DiskStep] = []
    /// The refusal a step gets instead of being performed, when this says so.
    var refuse: (DiskStep, PlanNames) -> DiskRefusal? = { _, _ in nil }
    /// What others (a producer, another process) do to the names just before a step.
    var meanwhile: (DiskStep, inout [SpoolPlace: FileIdentity]) -> Void = { _, _ in }

    static let file = FileIdentity(device: 1, inode: 10)
    static let record = FileIdentity(device: 1, inode: 11)
    static let another = FileIdentity(device: 1, inode: 99)

    /// A file `a.bin` and its record in the outbox.
    static func fileInOutbox(_ path: RelativePath = RelativePath("a.bin")) -> PlanNames {
        var names = PlanNames()
        names.names[SpoolPlace(.outbox, path)] = file
        names.names[SpoolPlace(.outbox, path, .record)] = record
        return names
    }

    mutating func perform(_ step: DiskStep) -> StepOutcome {
        performed.append(step)
        meanwhile(step, &names)
        if let refusal = refuse(step, self) { return .refused(refusal) }
        switch step {
        case .lookUp(let place, _):
            return .found(names[place])
        case .link(let from, let to, _):
            guard let file = names[from] else { return .refused(.noEntry) }
            guard names[to] == nil else { return .refused(.exists) }
            names[to] = file
        case .rename(let from, let to, _):
            guard let file = names[from] else { return .refused(.noEntry) }
            guard names[to] == nil else { return .refused(.exists) }
            names[to] = file
            names[from] = nil
        case .unlink(let place, _):
            guard names.removeValue(forKey: place) != nil else { return .refused(.noEntry) }
        case .syncDirectory, .makeParents, .markHookDue, .recordDeliveries:
            break
        }
        return .done
    }

    /// Runs a batch plan to its end; returns its results.
    mutating func run(_ plan: inout MoveBatchPlan) -> [MoveResult] {
        while let step = plan.next() { plan.took(perform(step)) }
        return plan.results
    }

    /// Runs an end-of-move plan to its end; returns its failure, if any.
    mutating func run(_ plan: inout MoveEndPlan) -> MoveFailure? {
        while let step = plan.next() { plan.took(perform(step)) }
        return plan.failure
    }
}
