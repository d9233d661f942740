import UploaderValues

/// Where a planner's steps are performed: the spool's interpreter in the daemon, a table of names
/// in the planner's tests. A planner written against it reads like the code it replaced — step,
/// outcome, next step — while every decision stays in the fenced target and every operation
/// passes through one interpreter.
package protocol DiskSteps {
    mutating func perform(_ step: DiskStep) -> StepOutcome
    /// Runs `body` holding the retry-move lock (shared or exclusive): what keeps a move into
    /// retry/ and `uploader retry`'s move back apart (another process; see `RetryMoveLock`).
    mutating func underRetryMoveLock<T>(exclusive: Bool, _ body: (inout Self) throws(PlanStop) -> T) throws(PlanStop) -> T
}

/// Why a planner stopped before its end: a step the disk refused (the interpreter holds the
/// error), or an outcome of the plan itself that its caller reports.
package enum PlanStop: Error, Equatable, Sendable {
    case refused(DiskRefusal)
    /// The file changed between the last check and its move; it is back in the outbox (under
    /// `broughtBackAs` when a new file had taken its own name).
    case changedDuringMove(String, broughtBackAs: RelativePath?)
    /// A record in retry/ whose file is in neither retry/ nor the outbox.
    case recordWithoutFile(RelativePath)
    /// A stale move-back record in retry/ for a file the outbox holds a later record of (removed).
    case supersededRecord(RelativePath)
    /// The move back found the name taken by a file dropped meanwhile: planned again.
    case startOver
    /// The name chosen for the file in sent/ or retry/ holds another file.
    case targetTaken(RelativePath)
    /// The record a plan starts from is not there (or cannot be read).
    case recordMissing(SpoolPlace)
    /// The outbox record is no longer the one the plan was given (`uploader retry` moved the
    /// file back meanwhile): the move it named is over.
    case recordChangedMeanwhile
}

extension DiskSteps {
    /// Performs `step`; a refusal stops the planner.
    mutating func run(_ step: DiskStep) throws(PlanStop) {
        if case .refused(let refusal) = perform(step) { throw .refused(refusal) }
    }

    /// Performs `step`; returns the refusal instead of stopping (for a planner that decides on it).
    mutating func attempt(_ step: DiskStep) -> DiskRefusal? {
        if case .refused(let refusal) = perform(step) { return refusal }
        return nil
    }

    mutating func lookUp(_ place: SpoolPlace) throws(PlanStop) -> FileIdentity? {
        switch perform(.lookUp(place, move: 0)) {
        case .found(let identity): return identity
        case .refused(let refusal): throw .refused(refusal)
        default: preconditionFailure("lookUp answered otherwise")
        }
    }

    /// Whether `place` has a name (a lookUp that cannot be answered counts as none, as `exists` does).
    mutating func exists(_ place: SpoolPlace) -> Bool {
        if case .found(let identity) = perform(.lookUp(place, move: 0)) { return identity != nil }
        return false
    }

    mutating func inspect(_ place: SpoolPlace) throws(PlanStop) -> FileFacts? {
        switch perform(.inspect(place)) {
        case .facts(let facts): return facts
        case .refused(let refusal): throw .refused(refusal)
        default: preconditionFailure("inspect answered otherwise")
        }
    }

    /// Whether the kernel lets us link the file at `place`.
    mutating func mayLink(_ place: SpoolPlace) throws(PlanStop) -> Bool { try answer(.mayLink(place)) }

    /// Whether the files at `a` and `b` hold the same bytes.
    mutating func sameBytes(_ a: SpoolPlace, _ b: SpoolPlace) throws(PlanStop) -> Bool { try answer(.sameBytes(a, b)) }

    private mutating func answer(_ step: DiskStep) throws(PlanStop) -> Bool {
        switch perform(step) {
        case .answer(let yes): return yes
        case .refused(let refusal): throw .refused(refusal)
        default: preconditionFailure("\(step) answered otherwise")
        }
    }

    /// Whether `hook` is still due for the file at `place` (its marker is in `.hooks-due/`).
    mutating func hookDue(_ place: SpoolPlace, hook: String) throws(PlanStop) -> Bool {
        switch perform(.lookUpHookDue(place, hook: hook)) {
        case .found(let marker): return marker != nil
        case .refused(let refusal): throw .refused(refusal)
        default: preconditionFailure("lookUpHookDue answered otherwise")
        }
    }

    /// The record beside `place`'s file; a read the disk refuses is `unreadable`, never absent.
    mutating func readRecord(_ place: SpoolPlace) -> RecordRead {
        switch perform(.readRecord(place.record)) {
        case .record(let read): return read
        case .refused: return .unreadable
        default: preconditionFailure("readRecord answered otherwise")
        }
    }

    mutating func name(_ step: DiskStep) throws(PlanStop) -> RelativePath {
        switch perform(step) {
        case .name(let name): return name
        case .refused(let refusal): throw .refused(refusal)
        default: preconditionFailure("a name step answered otherwise")
        }
    }

    mutating func syncDirectory(of place: SpoolPlace) throws(PlanStop) { try run(.syncDirectory(place, moves: [0])) }
    mutating func unlink(_ place: SpoolPlace) throws(PlanStop) { try run(.unlink(place, move: 0)) }

    /// True when both names lead to one file; false when either is absent. A name that cannot be
    /// looked at stops the plan (never taken for another file).
    mutating func sameFile(_ a: SpoolPlace, _ b: SpoolPlace) throws(PlanStop) -> Bool {
        guard let first = try lookUp(a), let second = try lookUp(b) else { return false }
        return first == second
    }

    /// link(2), where a name that already leads to this very file counts as done (a move run again
    /// after a crash); another file under that name stops the plan (`exists`). A name that was
    /// taken and is gone by the time it is looked at is linked again. True when the name is new.
    @discardableResult
    mutating func link(_ from: SpoolPlace, to: SpoolPlace) throws(PlanStop) -> Bool {
        var freed = 0
        while true {
            guard let refusal = attempt(.link(from, to: to, move: 0)) else { return true }
            guard refusal == .exists else { throw .refused(refusal) }
            if let there = try lookUp(to) {
                guard let mine = try lookUp(from) else { throw .refused(.noEntry) }
                guard there == mine else { throw .refused(.exists) }
                return false
            }
            freed += 1
            if freed == MoveBatchPlan.linkTriesOnAFreedName { throw .refused(.exists) }
        }
    }
}

/// How a record's `stored_as` names a place: the area's directory relative to the spool's root,
/// then the path (`sent/report.2.pdf`). A value the spool makes from its layout, so a planner can
/// write and read `stored_as` without seeing the spool's paths.
package struct StoredAsNaming: Sendable {
    /// Each area's prefix, with its trailing slash.
    package let prefixes: [SpoolArea: String]

    package init(prefixes: [SpoolArea: String]) { self.prefixes = prefixes }

    package func storedAs(_ place: SpoolPlace) -> String { prefixes[place.area]! + place.path.display }

    /// The place a `stored_as` names, if inside one of the areas. A record in the outbox may be
    /// written by anyone who can write there: a value that climbs out names nothing.
    package func place(_ storedAs: String) -> SpoolPlace? {
        for area in [SpoolArea.sent, .retry, .outbox] {
            guard let prefix = prefixes[area], storedAs.hasPrefix(prefix) else { continue }
            let path = RelativePath(String(storedAs.dropFirst(prefix.count)))
            return Self.staysInside(path) ? SpoolPlace(area, path) : nil
        }
        return nil
    }

    /// True for a non-empty relative path with no `.` or `..` component and no empty one.
    package static func staysInside(_ path: RelativePath) -> Bool {
        guard !path.bytes.isEmpty, path.bytes.first != UInt8(ascii: "/") else { return false }
        let parts = path.bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        return parts.allSatisfy { !$0.isEmpty && !$0.elementsEqual([0x2E]) && !$0.elementsEqual([0x2E, 0x2E]) }
    }
}
