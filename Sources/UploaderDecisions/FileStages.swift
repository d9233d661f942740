import UploaderValues

/// Every outbox file a profile's owner knows, with its one stage, and the indexes the transitions
/// read kept beside the map: the line (`waiting`), the claimed files in order (`ready`), the slots,
/// the claims ahead, the counts. Only this type changes them, always together (`move`), so an
/// index cannot disagree with the map; debug builds check that they do not after every step
/// (`ProfileState.checkInvariants`).
///
/// The map's entries are three bytes, as a backlog of 100,000 files has one each: what only some
/// files have is kept beside, keyed the same way — a held file's rank (a waiting one's is in the
/// line), a delayed file's time and when a ready file's claim reported it ready.
package struct FileStages: Sendable {
    /// One file: its stage, and whether the watcher saw its name again while it was held (it is
    /// looked at once more when let go).
    package struct Entry: Sendable, Equatable {
        package var stage: FileStage
        package var seenAgain = false
    }

    package private(set) var entries: [RelativePath: Entry] = [:]
    /// The `waiting` files, by rank.
    package private(set) var waiting = PathQueue()
    /// The rank each file not in line last waited with (`order`), so it waits in its place again.
    private(set) var heldRanks: [RelativePath: Int64] = [:]
    /// The `ready` files, in `order` (by their rank when each was claimed).
    package private(set) var ready: [RelativePath] = []
    /// The files holding a transfer slot: `sending` and `claimingInSlot`.
    package private(set) var slots: Set<RelativePath> = []
    /// The `claiming` files (claims ahead of a slot) with their ranks.
    package private(set) var claimsAhead: [RelativePath: Int64] = [:]
    /// The `delayed` files, each with when it goes back in line (monotonic).
    package private(set) var delayed: [RelativePath: Double] = [:]
    /// The `ready` files, each with when its claim reported it ready (monotonic): the record the
    /// claim wrote aside is put in place only while it is fresh (`ProfilePolicy.preparedRecordLifetime`).
    package private(set) var readySince: [RelativePath: Double] = [:]
    /// Files refused for our credentials: `awaitingCredentials`, and `settling` ones marked so.
    package private(set) var awaitingCredentials: Set<RelativePath> = []
    /// `settling` files, and those of them whose record may still say `uploading`.
    package private(set) var settling = 0
    private(set) var settlingWithOpenRecord = 0

    package init() {}

    package func stage(of path: RelativePath) -> FileStage? { entries[path]?.stage }

    /// The rank a file not in line waits with when put back (nil for one in line or unknown).
    package func rank(of path: RelativePath) -> Int64? { heldRanks[path] }

    /// Files whose record may say `uploading`: every slot's, and those being settled whose record
    /// is not yet rewritten. No more than `concurrency`, so the spool never shows more uploads than
    /// there are slots.
    package var openRecords: Int { slots.count + settlingWithOpenRecord }

    /// What `status` calls queued: waiting, claimed ahead of a slot, or claimed and waiting for one.
    package var queued: Int { waiting.count + claimsAhead.count + ready.count }
    /// What `status` calls uploading: holding a slot or being settled.
    package var inFlight: Int { slots.count + settling }

    /// Every known path at one of `kinds` (scans the map: for tests and traces).
    package func paths(_ kinds: FileStage.Kind...) -> Set<RelativePath> {
        Set(entries.lazy.filter { kinds.contains($0.value.stage.kind) }.map(\.key))
    }

    // MARK: Changes

    /// Puts `path` in line (with `rank`, else the one it last waited with). A file already in line
    /// keeps its place and rank.
    package mutating func enqueue(_ path: RelativePath, rank: Int64? = nil, quiet: Bool = false) {
        if case .waiting? = entries[path]?.stage { return }
        move(path, to: .waiting(quiet: quiet), rank: rank)
    }

    /// Puts those of `files` the owner does not know yet, and `eligible` lets in, in line at once
    /// (the start-up backlog); `count`: how many that is at most, to make room once. A path twice
    /// in `files` keeps its first rank.
    package mutating func enqueueNew(_ files: [QueuedFile], count: Int, rank: (QueuedFile) -> Int64,
                                     eligible: (QueuedFile) -> Bool) {
        if count <= 1 {
            for file in files where entries[file.path] == nil && eligible(file) { enqueue(file.path, rank: rank(file)) }
            return
        }
        verifyMove(nil, .waiting, files.first?.path)
        entries.reserveCapacity(entries.count + count)
        // The line is taken out while the map admits each file (no second copy of the batch).
        var line = PathQueue()
        swap(&line, &waiting)
        line.push(files, count: count, rank: rank) { file in
            guard entries[file.path] == nil, eligible(file) else { return false }
            entries[file.path] = Entry(stage: .waiting(quiet: false))
            return true
        }
        swap(&line, &waiting)
    }

    /// The next file in line, now at the claim it starts: ahead of a slot, or in one.
    package mutating func claimNext(inSlot: Bool, trial: Bool = false) -> RelativePath? {
        guard let (path, rank) = waiting.popFirst() else { return nil }
        guard case .waiting(let quiet)? = entries[path]?.stage else {
            preconditionFailure("FileStages: \(path) in line without the stage waiting")
        }
        let stage: FileStage = inSlot ? .claimingInSlot(quiet: quiet, trial: trial) : .claiming(quiet: quiet)
        verifyMove(.waiting, stage.kind, path)
        entries[path]?.stage = stage
        heldRanks[path] = rank
        index(path, stage, rank: rank, until: nil)
        return path
    }

    /// The first ready file takes a slot; with when its claim reported it ready.
    package mutating func sendFirstReady(trial: Bool = false) -> (path: RelativePath, readySince: Double)? {
        guard let path = ready.first, let since = readySince[path] else { return nil }
        move(path, to: .sending(trial: trial))
        return (path, since)
    }

    /// Everyone in line leaves it (a stop, or `run --once` closing). The map is made afresh with
    /// the few files left, so a backlog's room is given back as the line's is.
    package mutating func removeAllWaiting() {
        guard let first = waiting.members.first(where: { _ in true }) else { return }
        verifyMove(.waiting, nil, first.path)
        waiting = PathQueue()
        entries = entries.filter { entry in
            if case .waiting = entry.value.stage { false } else { true }
        }
    }

    /// Notes a newer rank for a file that is not in line now (it is held or delayed), for when it is.
    package mutating func remember(_ path: RelativePath, rank: Int64) {
        guard let had = heldRanks[path], had != rank else { return }
        heldRanks[path] = rank
        if claimsAhead[path] != nil { claimsAhead[path] = rank }
        // A ready file takes its place again: the ready list stays in `order`.
        if let at = ready.firstIndex(of: path) {
            ready.remove(at: at)
            ready.insert(path, at: readyPosition(of: path, rank: rank))
        }
    }

    package mutating func noteSeenAgain(_ path: RelativePath) {
        entries[path]?.seenAgain = true
    }

    /// Whether the watcher saw `path` again while it was held; the note is cleared.
    package mutating func takeSeenAgain(_ path: RelativePath) -> Bool {
        guard entries[path]?.seenAgain == true else { return false }
        entries[path]?.seenAgain = false
        return true
    }

    /// `path` goes to `stage` (not `delayed`: see `delay`), with the rank given, else the one it had,
    /// else 0; the indexes go with it.
    package mutating func move(_ path: RelativePath, to stage: FileStage, rank: Int64? = nil) {
        precondition(stage != .delayed && stage != .ready, "FileStages: a file is delayed or ready with its time")
        change(path, to: stage, rank: rank, until: nil)
    }

    /// `path`'s claim reported it ready at `since` (monotonic): it waits for a slot.
    package mutating func markReady(_ path: RelativePath, since: Double) {
        change(path, to: .ready, rank: nil, until: since)
    }

    /// `path` could not have its attempt recorded: back in line at `until` (monotonic).
    package mutating func delay(_ path: RelativePath, until: Double) {
        change(path, to: .delayed, rank: nil, until: until)
    }

    /// The owner lets go of `path`: it is no longer at any stage.
    package mutating func remove(_ path: RelativePath) {
        guard let old = entries.removeValue(forKey: path) else { return }
        verifyMove(old.stage.kind, nil, path)
        if case .waiting = old.stage { _ = waiting.remove(path) }
        unindex(path, old.stage)
        heldRanks[path] = nil
    }

    private mutating func change(_ path: RelativePath, to stage: FileStage, rank: Int64?, until: Double?) {
        let old = entries[path]
        verifyMove(old?.stage.kind, stage.kind, path)
        var had = heldRanks[path]
        if let old {
            if case .waiting = old.stage { had = waiting.remove(path) }
            unindex(path, old.stage)
        }
        let rank = rank ?? had ?? 0
        entries[path] = Entry(stage: stage, seenAgain: old?.seenAgain ?? false)
        if case .waiting = stage {
            if had != nil { heldRanks[path] = nil }
        } else if had != rank {
            heldRanks[path] = rank
        }
        index(path, stage, rank: rank, until: until)
    }

    /// Where `path` goes in the ready list, by `rank` (ties by name).
    private func readyPosition(of path: RelativePath, rank: Int64) -> Int {
        ready.firstIndex { other in (rank, path) < (heldRanks[other] ?? 0, other) } ?? ready.endIndex
    }

    private mutating func unindex(_ path: RelativePath, _ stage: FileStage) {
        switch stage {
        case .waiting: break
        case .delayed: delayed[path] = nil
        case .claiming: claimsAhead[path] = nil
        case .claimingInSlot, .sending: slots.remove(path)
        case .ready:
            if let at = ready.firstIndex(of: path) { ready.remove(at: at) }
            readySince[path] = nil
        case .settling(let recordOpen, let refused):
            settling -= 1
            if recordOpen { settlingWithOpenRecord -= 1 }
            if refused { awaitingCredentials.remove(path) }
        case .awaitingCredentials: awaitingCredentials.remove(path)
        }
    }

    private mutating func index(_ path: RelativePath, _ stage: FileStage, rank: Int64, until: Double?) {
        switch stage {
        case .waiting: waiting.push(path, rank: rank)
        case .delayed: delayed[path] = until ?? 0
        case .claiming: claimsAhead[path] = rank
        case .claimingInSlot, .sending: slots.insert(path)
        case .ready:
            // Among the claimed, in `order`: claims finish in any order.
            ready.insert(path, at: readyPosition(of: path, rank: rank))
            readySince[path] = until ?? 0
        case .settling(let recordOpen, let refused):
            settling += 1
            if recordOpen { settlingWithOpenRecord += 1 }
            if refused { awaitingCredentials.insert(path) }
        case .awaitingCredentials: awaitingCredentials.insert(path)
        }
    }

    /// Debug builds: a change not in `FileStage.successors` is a bug, named with its file.
    private func verifyMove(_ from: FileStage.Kind?, _ to: FileStage.Kind?, _ path: RelativePath?) {
        #if DEBUG
        guard let path, from != to else { return }
        if !FileStage.successors(of: from).contains(to) {
            preconditionFailure("invariant stageChangeAllowed broken for \(path): \(from.map(\.rawValue) ?? "none") → \(to.map(\.rawValue) ?? "none")")
        }
        #endif
    }
}

extension FileStages: Equatable {
    /// The same files at the same stages, with the same ranks, notes and times, the claimed in the
    /// same order; the other indexes follow from that (the line's layout is no part of the value).
    package static func == (a: FileStages, b: FileStages) -> Bool {
        a.entries == b.entries && a.heldRanks == b.heldRanks && a.waiting == b.waiting && a.delayed == b.delayed && a.ready == b.ready
            && a.readySince == b.readySince
    }
}

/// The changes the transitions make that only touch a stage's data.
extension FileStages {
    /// The claims running, ahead of a slot or in one (sorted).
    /// Whether a claim of `path` runs (ahead of a slot, or in one).
    package func isClaiming(_ path: RelativePath) -> Bool {
        switch stage(of: path) {
        case .claiming?, .claimingInSlot?: true
        default: false
        }
    }

    package var claims: [RelativePath] {
        (Array(claimsAhead.keys) + slots.filter { if case .claimingInSlot? = stage(of: $0) { true } else { false } }).sorted()
    }

    /// A settle job rewrote the record of `path`: it no longer says `uploading`.
    package mutating func recordRewritten(_ path: RelativePath) {
        guard case .settling(true, let refused)? = stage(of: path) else { return }
        move(path, to: .settling(recordOpen: false, awaitingCredentials: refused))
    }

    /// The destination refused our credentials for `path`, being settled: it waits apart once settled.
    package mutating func markAwaitingCredentials(_ path: RelativePath) {
        guard case .settling(let recordOpen, false)? = stage(of: path) else { return }
        move(path, to: .settling(recordOpen: recordOpen, awaitingCredentials: true))
    }

    /// No claim running is quiet any more (a stop: a claim cut by it that finds its file gone says so).
    package mutating func unquietClaims() {
        for path in claimsAhead.keys {
            if case .claiming(true)? = stage(of: path) { move(path, to: .claiming(quiet: false)) }
        }
        for path in slots {
            if case .claimingInSlot(true, let trial)? = stage(of: path) { move(path, to: .claimingInSlot(quiet: false, trial: trial)) }
        }
    }
}
