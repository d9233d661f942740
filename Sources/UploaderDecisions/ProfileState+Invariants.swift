import Foundation
import UploaderValues

/// What must hold of a profile's state after every step. Debug builds check it at the end of each
/// `ProfileCore.step` (so every core test and the simulator do); release builds never call it. A
/// broken invariant is a bug in the core: the check stops the program, naming the invariant and,
/// where there is one, the file.
extension ProfileState {
    package func checkInvariants(_ policy: ProfilePolicy) {
        func broken(_ invariant: String, _ path: RelativePath? = nil, _ detail: String) -> Never {
            preconditionFailure("invariant \(invariant) broken\(path.map { " for \($0)" } ?? ""): \(detail)")
        }
        let files = self.files
        var waiting = 0, ready = 0, slots = 0, claimsAhead = 0, delayed = 0, settling = 0, openRecords = 0, awaiting = 0
        var trial: RelativePath?
        // Each file has one stage (the map's key), and the index of that stage holds it.
        for (path, entry) in files.entries {
            // A file in line has its rank there; any other, beside the map.
            if case .waiting = entry.stage {
                if files.heldRanks[path] != nil { broken("ranksKept", path, "in line with a held rank too") }
            } else if files.heldRanks[path] == nil {
                broken("ranksKept", path, "\(entry.stage.kind.rawValue) without a rank")
            }
            switch entry.stage {
            case .waiting:
                waiting += 1
            case .delayed:
                delayed += 1
                if files.delayed[path] == nil { broken("delayedIndexed", path, "delayed, not in the index") }
            case .claiming:
                claimsAhead += 1
                if files.claimsAhead[path] == nil || files.claimsAhead[path] != files.heldRanks[path] {
                    broken("claimsAheadIndexed", path, "claiming with rank \(files.heldRanks[path] ?? 0), index says \(files.claimsAhead[path].map(String.init) ?? "absent")")
                }
            case .claimingInSlot, .sending:
                slots += 1
                openRecords += 1
                if !files.slots.contains(path) { broken("slotsIndexed", path, "\(entry.stage.kind.rawValue) without a slot") }
            case .ready:
                ready += 1
            case .settling(let recordOpen, let refused):
                settling += 1
                if recordOpen { openRecords += 1 }
                if refused {
                    awaiting += 1
                    if !files.awaitingCredentials.contains(path) { broken("awaitingCredentialsIndexed", path, "refused, not in the index") }
                }
            case .awaitingCredentials:
                awaiting += 1
                if !files.awaitingCredentials.contains(path) { broken("awaitingCredentialsIndexed", path, "awaiting, not in the index") }
            }
            if entry.stage.isTrial {
                if let trial { broken("oneTrialAtMost", path, "a second trial beside \(trial)") }
                trial = path
            }
        }
        // Each index holds its stage's files and nothing else: as many, each at that stage.
        var inLine = Set<RelativePath>()
        inLine.reserveCapacity(files.waiting.count)
        for member in files.waiting.members {
            guard case .waiting? = files.stage(of: member.path) else { broken("waitingIndexed", member.path, "in line at stage \(describe(member.path))") }
            if !inLine.insert(member.path).inserted { broken("waitingIndexed", member.path, "in line twice") }
        }
        if inLine.count != waiting { broken("waitingIndexed", nil, "\(inLine.count) in line, \(waiting) at stage waiting") }
        if files.heldRanks.count != files.entries.count - waiting {
            broken("ranksKept", nil, "\(files.heldRanks.count) held ranks for \(files.entries.count - waiting) files not in line")
        }
        for path in files.ready where files.stage(of: path) != .ready { broken("readyIndexed", path, "in the ready list at stage \(describe(path))") }
        if Set(files.ready).count != ready || files.ready.count != ready {
            broken("readyIndexed", nil, "\(files.ready.count) in the ready list, \(ready) at stage ready")
        }
        for (first, next) in zip(files.ready, files.ready.dropFirst())
        where (files.heldRanks[next] ?? 0, next) < (files.heldRanks[first] ?? 0, first) {
            broken("readyInOrder", next, "ready after \(first.logSafe), which ranks after it")
        }
        if files.readySince.count != ready || files.ready.contains(where: { files.readySince[$0] == nil }) {
            broken("readySinceKept", files.ready.first { files.readySince[$0] == nil }, "\(files.readySince.count) times kept, \(ready) ready")
        }
        if files.slots.count != slots { broken("slotsIndexed", nil, "\(files.slots.count) slots taken, \(slots) files holding one") }
        if files.claimsAhead.count != claimsAhead { broken("claimsAheadIndexed", nil, "\(files.claimsAhead.count) indexed, \(claimsAhead) claiming") }
        if files.delayed.count != delayed { broken("delayedIndexed", nil, "\(files.delayed.count) indexed, \(delayed) delayed") }
        if files.awaitingCredentials.count != awaiting {
            broken("awaitingCredentialsIndexed", nil, "\(files.awaitingCredentials.count) indexed, \(awaiting) refused for our credentials")
        }
        if files.settling != settling { broken("settlingCounted", nil, "counted \(files.settling), \(settling) settling") }
        if files.openRecords != openRecords { broken("openRecordsCounted", nil, "counted \(files.openRecords), \(openRecords) open") }
        // What the snapshot publishes (`status`, metrics) is what the stages say.
        if files.queued != waiting + claimsAhead + ready || files.inFlight != slots + settling {
            broken("snapshotCounts", nil, "queued \(files.queued), uploading \(files.inFlight); stages say \(waiting + claimsAhead + ready), \(slots + settling)")
        }
        // Slots and records: never more uploads than slots, nor records saying `uploading`.
        if slots > policy.concurrency { broken("slotsWithinConcurrency", nil, "\(slots) slots taken, concurrency \(policy.concurrency): \(files.slots.sorted())") }
        if openRecords > policy.concurrency {
            broken("recordsWithinSlots", nil, "\(openRecords) records may say uploading, concurrency \(policy.concurrency)")
        }
        if claimsAhead + ready > policy.claimAhead {
            broken("claimsAheadWithinLimit", nil, "\(claimsAhead) claims ahead and \(ready) ready, claim_ahead \(policy.claimAhead)")
        }
        // Nothing joins the line once the profile takes no more work; nothing is held once stopped.
        if phase != .running || closed, waiting + ready > 0 {
            broken("nothingInLineUnlessTakingWork", files.ready.first ?? files.waiting.members.first { _ in true }?.path,
                   "\(waiting) waiting and \(ready) ready while not taking work")
        }
        if phase == .stopped, slots + claimsAhead + settling + retries.movingBack > 0 {
            broken("stoppedHoldsNothing", nil, "\(slots) slots, \(claimsAhead) claims, \(settling) settling, \(retries.movingBack) moving back")
        }
        checkRetryInvariants()
        checkChoreInvariants(policy)
    }

    /// Passes over sent/ and rescans happen only as the policy configures them, in a daemon, one of each at a time.
    private func checkChoreInvariants(_ policy: ProfilePolicy) {
        let daemon = policy.mode == .daemon
        if !daemon || policy.retention == nil, chores.sweeping || chores.sweptAt != nil {
            preconditionFailure("invariant choresConfigured broken: a pass over sent/ without retention in a daemon")
        }
        if !daemon || policy.rescanEvery == nil, chores.rescanning || chores.rescanDue != nil {
            preconditionFailure("invariant choresConfigured broken: a periodic rescan without `rescan` in a daemon")
        }
        if chores.rescanning && chores.rescanDue != nil {
            preconditionFailure("invariant oneRescanAtATime broken: a rescan planned while one runs")
        }
    }

    private func checkRetryInvariants() {
        var earliest: Date?
        var movingBack = 0
        for (path, stage) in retries.entries {
            switch stage {
            case .heldForRetry where retries.waitingForClaim.contains(path):
                // Due once the claim of its name has ended.
                if !files.isClaiming(path) { preconditionFailure("invariant moveBackWaitsForClaim broken: \(path) waits for no claim") }
            case .heldForRetry(let due): earliest = min(earliest ?? due, due)
            case .movingBack:
                // Due again only once its move back has ended.
                movingBack += 1
            }
        }
        if retries.earliest != earliest {
            preconditionFailure("invariant retryEarliestKept broken: kept \(String(describing: retries.earliest)), earliest due \(String(describing: earliest))")
        }
        if retries.movingBack != movingBack {
            preconditionFailure("invariant movingBackCounted broken: counted \(retries.movingBack), \(movingBack) moving back")
        }
    }

    private func describe(_ path: RelativePath) -> String {
        files.stage(of: path).map { "\($0.kind.rawValue)" } ?? "none"
    }
}
