import UploaderDecisions
import UploaderValues

/// A plan's steps performed on names alone: which file each place leads to. What the table tests
/// of the spool's plans run them on; `refuse` makes a chosen step fail as the disk would.
struct PlanNames: DiskSteps {
    var names: [SpoolPlace: FileIdentity] = [:]
    /// Size and mtime of each file, by identity (a file absent here has size 1 and mtime "t0").
    var versions: [FileIdentity: (size: Int64, mtime: String)] = [:]
    /// What each record holds, by identity.
    var records: [FileIdentity: Manifest] = [:]
    /// Identities handed to records written.
    var nextInode: UInt64 = 1000
    /// The file the caller holds open, whatever name it has.
    var held: FileIdentity?
    /// The places whose `on_sent` (or other) hook is due: their markers in `.hooks-due/`.
    var hooksDue: Set<SpoolPlace> = []
    /// Files the kernel will not let us link (another user's, `fs.protected_hardlinks`).
    var theirs: Set<FileIdentity> = []
    /// Files rewritten in place keeping their size and mtime: their bytes differ from any copy's.
    var rewritten: Set<FileIdentity> = []
    /// What the held file is, seen through its descriptor now (nil: as `held` was).
    var heldNow: (size: Int64, mtime: String)?
    /// The log lines the plan had written.
    var notes: [PlanNote] = []
    /// Every step performed, in order.
    var performed: [DiskStep] = []
    /// The refusal a step gets instead of being performed, when this says so.
    var refuse: (DiskStep, PlanNames) -> DiskRefusal? = { _, _ in nil }
    /// What others (a producer, another process) do to the names just before a step.
    var meanwhile: (DiskStep, inout [SpoolPlace: FileIdentity]) -> Void = { _, _ in }

    /// A record of `path` in `state`, as the table tests move it.
    static func manifest(_ path: RelativePath, _ state: Manifest.State) -> Manifest {
        Manifest(id: "id-" + path.display, profile: "p", path: path, size: 1, mtime: "t0", sha256: nil, contentType: "application/octet-stream",
                 state: state, createdAt: "t0")
    }

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
        case .inspect(let place):
            return .facts(names[place].map { id in
                let version = versions[id] ?? (1, "t0")
                return FileFacts(identity: id, size: version.size, mtime: version.mtime, mtimeNanos: Self.nanos(version.mtime))
            })
        case .readRecord(let place):
            guard let id = names[place] else { return .record(.missing) }
            return .record(records[id].map(RecordRead.parsed) ?? .corrupt)
        case .writeRecord(let manifest, let place, _):
            nextInode += 1
            let id = FileIdentity(device: 1, inode: nextInode)
            names[place] = id
            records[id] = manifest
        case .quarantineRecord(let place):
            guard let record = names.removeValue(forKey: place.record) else { return .refused(.noEntry) }
            let aside = SpoolPlace(.outbox, RelativePath(".quarantine/" + place.path.display + SpoolPlace.recordSuffix), .file)
            names[aside] = record
            return .name(aside.path)
        case .note(let note):
            notes.append(note)
        case .lookUpHookDue(let place, _):
            return .found(hooksDue.contains(place) ? FileIdentity(device: 1, inode: 500) : nil)
        case .inspectHeld:
            return .facts(held.map { id in
                let version = heldNow ?? versions[id] ?? (1, "t0")
                return FileFacts(identity: id, size: version.size, mtime: version.mtime, mtimeNanos: Self.nanos(version.mtime))
            })
        case .mayLink(let place):
            guard let id = names[place] else { return .refused(.noEntry) }
            return .answer(!theirs.contains(id))
        case .copyHeld(let place):
            guard names[place] == nil, let held else { return .refused(.exists) }
            nextInode += 1
            let copy = FileIdentity(device: 1, inode: nextInode)
            names[place] = copy
            versions[copy] = versions[held]
        case .exchange(let a, let b):
            guard let first = names[a], let second = names[b] else { return .refused(.noEntry) }
            (names[a], names[b]) = (second, first)
        case .renameOver(let from, let to):
            guard let file = names.removeValue(forKey: from) else { return .refused(.noEntry) }
            names[to] = file
        case .sameBytes(let a, let b):
            guard let first = names[a], let second = names[b] else { return .refused(.noEntry) }
            let same = (versions[first] ?? (1, "t0")) == (versions[second] ?? (1, "t0"))
            return .answer(same && !rewritten.contains(first) && !rewritten.contains(second))
        case .syncDirectory, .makeParents, .markHookDue, .recordDeliveries:
            break
        }
        return .done
    }

    mutating func underRetryMoveLock<T>(exclusive: Bool, _ body: (inout PlanNames) throws(PlanStop) -> T) throws(PlanStop) -> T {
        try body(&self)
    }

    /// A table's mtime ("t5") as nanoseconds (5).
    static func nanos(_ mtime: String) -> Int64 { Int64(mtime.dropFirst()) ?? 0 }

    /// `a.bin` → `a.2.bin` (the spool's numbering, for names with one extension).
    static func numbered(_ path: RelativePath, _ n: Int) -> RelativePath {
        let text = path.display
        guard let dot = text.lastIndex(of: "."), dot != text.startIndex else { return RelativePath(text + ".\(n)") }
        return RelativePath(text[..<dot] + ".\(n)" + text[dot...])
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
