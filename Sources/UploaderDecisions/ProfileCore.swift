import Foundation
import UploaderValues

/// The pure transition function of a profile: `(state, event, policy, now) → (state', effects)`.
///
/// No I/O happens here, and nothing here reads a clock or a random source of its own: the
/// runner performs the effects and feeds their results back as events. Every decision about
/// what starts, what waits, when to retry, when the destination counts as gone or back, and
/// what is logged about it is made in this file and its extensions, so it can be tested by
/// feeding events and reading effects, with time advanced by hand.
package enum ProfileCore {
    package static func step(_ state: ProfileState, _ event: ProfileEvent, policy: ProfilePolicy,
                             now: Instant) -> (ProfileState, [ProfileEffect]) {
        var next = state
        let effects = step(&next, event, policy: policy, now: now)
        return (next, effects)
    }

    /// The same, changing `state` in place: the owner's loop uses this one, so a queue of
    /// 100,000 files is never copied (a copy per event made a backlog quadratic).
    package static func step(_ state: inout ProfileState, _ event: ProfileEvent, policy: ProfilePolicy,
                             now: Instant) -> [ProfileEffect] {
        var transition = Transition(state: ProfileState(seed: 0), policy: policy, now: now)
        swap(&transition.state, &state)
        defer { swap(&transition.state, &state) }
        transition.refreshWindow()
        transition.apply(event)
        transition.fireTimers()
        transition.settleDoubt()
        transition.startWork()
        transition.checkEnd()
        #if DEBUG
        // Every step of every debug build (tests, the simulator) ends with the state's invariants.
        transition.state.checkInvariants(policy)
        #endif
        return transition.effects
    }

    /// When the next timer is due — a retry or a window's edge (wall clock), a probe, a delayed
    /// file, a pass over sent/, a rescan or the end of the shutdown grace (monotonic) — as seconds from `now`; nil when nothing is timed.
    package static func nextDeadline(_ state: ProfileState, policy: ProfilePolicy, now: Instant) -> Double? {
        var soonest: Double?
        func consider(_ seconds: Double) { soonest = min(soonest ?? seconds, seconds) }
        switch state.phase {
        case .running:
            if policy.mode == .daemon && !state.closed && state.mayStart(policy),
               let due = state.retries.earliest {
                consider(due.timeIntervalSince(now.wall))
            }
            // The window opens or closes: wake then, without polling.
            if let until = state.window?.until { consider(until.timeIntervalSince(now.wall)) }
            if case .offline(_, _, let nextProbe) = state.reachability, state.probing == nil {
                consider(nextProbe - now.mono)
            }
            for at in state.files.delayed.values { consider(at - now.mono) }
            // A pass over sent/, a periodic rescan.
            if let at = state.sweepDue(policy) { consider(at - now.mono) }
            if let at = state.rescanDue(policy) { consider(at - now.mono) }
            // Paused for our credentials: the next trial (one that is due starts at once, or waits
            // for the upload still running).
            if case .rejected(_, _, _, let at) = state.credentials, at > now.mono, !state.closed { consider(at - now.mono) }
        case .stopping(let deadline):
            if !state.graceOver && !state.files.slots.isEmpty { consider(deadline - now.mono) }
        case .stopped:
            break
        }
        return soonest.map { max(0, $0) }
    }
}

/// One step in progress: the state being changed and the effects asked for so far.
struct Transition {
    var state: ProfileState
    let policy: ProfilePolicy
    let now: Instant
    var effects: [ProfileEffect] = []

    init(state: ProfileState, policy: ProfilePolicy, now: Instant) {
        self.state = state
        self.policy = policy
        self.now = now
    }

    var takingWork: Bool { state.phase == .running && !state.closed }

    mutating func apply(_ event: ProfileEvent) {
        switch event {
        case .recovered(let files, let retries, let directories):
            state.recovered = true
            warnIgnored(directories)
            queue(files)
            for entry in retries { scheduleRetry(entry) }
            planChores()
            if !policy.interfaces.isEmpty { checkRoute() }
        case .found(let paths):
            queue(paths)
        case .retriesFound(let entries):
            for entry in entries { scheduleRetry(entry) }
        case .directoriesIgnored(let paths):
            warnIgnored(paths)
        case .claimed(let path, let report):
            claimed(path, report)
        case .attempted(let path, let report):
            attempted(path, report)
        case .recordRewritten(let path):
            state.files.recordRewritten(path)
        case .settled(let path, let report):
            settled(path, report)
        case .movedBack(let from, let to):
            state.retries.movedBack(from)
            if let to {
                queue([to])
            } else {
                log(.debug, "retry entry no longer in retry/", ["file": from.logSafe])
            }
            queueFoundWhileMovingBack(from)
        case .moveBackFailed(let path):
            state.retries.movedBack(path)
            if state.retries.stage(of: path) == nil { scheduleRetry(RetryEntry(path: path, due: now.wall.addingTimeInterval(policy.unwritableRetry))) }
            queueFoundWhileMovingBack(path)
        case .recordWithoutFile(let path):
            // Still moving back (a stop waits for it) until the record is moved aside.
            effects.append(.quarantine(path))
        case .quarantined(let path, let report):
            state.retries.movedBack(path)
            queueFoundWhileMovingBack(path)
            switch report {
            case .movedAside(let aside):
                log(.warn, "manifest in retry/ with no file (the file vanished); manifest moved aside", ["file": path.logSafe, "manifest": aside])
            case .failed(let error):
                log(.error, "manifest in retry/ with no file; cannot move it aside", ["file": path.logSafe, "error": error])
            }
        case .sentSwept:
            sentSwept()
        case .rescanned:
            rescanned()
        case .probed(let ticket, let problem):
            probed(ticket, problem: problem)
        case .networkChanged:
            guard state.phase == .running, policy.mode == .daemon else { return }
            if state.probing != nil { state.probeAgain = true } else { startProbe() }
            if !policy.interfaces.isEmpty { checkRoute() }
        case .routeChecked(let report):
            routeChecked(report)
        case .credentialsChanged:
            credentialsChanged()
        case .tick:
            break
        case .stop(let grace):
            stop(grace: grace)
        }
    }

    // MARK: Queue

    mutating func queue(_ files: [QueuedFile]) {
        guard takingWork else { return }
        // Files the owner knows already first; then the new ones go in line straight from `files`
        // (a start-up backlog is not copied into a second list on the way).
        var new = 0
        for file in files {
            let path = file.path
            if case .movingBack? = state.retries.stage(of: path) {
                state.foundWhileMovingBack[path] = file
                continue
            }
            switch state.files.stage(of: path) {
            case nil:
                new += 1
            case .waiting?:
                break
            case .delayed?:
                state.files.remember(path, rank: policy.order.rank(file))
            case _?:
                state.files.noteSeenAgain(path)
                state.files.remember(path, rank: policy.order.rank(file))
            }
        }
        guard new > 0 else { return }
        let (order, retries) = (policy.order, state.retries)
        state.files.enqueueNew(files, count: new, rank: order.rank) { file in
            if case .movingBack? = retries.stage(of: file.path) { return false }
            return true
        }
    }

    /// The move back of `path` has ended: a file found under its name meanwhile is queued now
    /// (the file moved back itself, already queued under its new name, is not queued twice).
    mutating func queueFoundWhileMovingBack(_ path: RelativePath) {
        guard let file = state.foundWhileMovingBack.removeValue(forKey: path) else { return }
        queue([file])
    }

    mutating func warnIgnored(_ directories: [RelativePath]) {
        for path in directories {
            warnOnce(path, "directory in a non-recursive outbox ignored (set recursive = yes to upload its files)")
        }
    }

    mutating func claimed(_ path: RelativePath, _ report: ClaimReport) {
        // A move back of a file in retry/ under this name waits for no claim now.
        defer { state.retries.claimEnded(path) }
        let quiet: Bool
        switch state.files.stage(of: path) {
        case .claimingInSlot(let wasQuiet, let trial)?:
            // Claimed in its slot (`claimAndUpload`): ready, its job goes on to send it; else the
            // slot is free (and a trial that never got to send lets the next file be tried at once).
            if report == .ready { return state.files.move(path, to: .sending(trial: trial)) }
            quiet = wasQuiet
        case .claiming(let wasQuiet)?:
            quiet = wasQuiet
        default:
            quiet = false
        }
        switch report {
        case .ready:
            if takingWork {
                state.files.markReady(path, since: now.mono)
            } else {
                effects.append(.release(path))
                state.files.remove(path)
            }
            return
        case .unreadable(let reason):
            let reason = "cannot read file: \(reason)"
            state.totals.failed += 1
            logFiled(path, failed: true, reason: reason, attempts: 0, next: nil)
            settle(path, .failedWithoutAttempt(reason: reason))
            return
        case .vanished:
            log(quiet ? .debug : .info, "file vanished before upload; dropped from the queue", ["file": path.logSafe])
        case .refused(let reason):
            state.refused.insert(path)
            warnOnce(path, "not uploaded: \(reason)")
        case .refusedForNow(let reason):
            warnOnce(path, "not uploaded yet, claimed again in a few seconds: \(reason)")
            if takingWork {
                // Its name seen again meanwhile changes nothing: it is looked at again anyway.
                _ = state.files.takeSeenAgain(path)
                state.files.delay(path, until: now.mono + policy.unwritableRetry)
                return
            }
        case .finishedByRecovery(let retry, let another):
            if let retry { scheduleRetry(retry) }
            // The new file under the name is checked as if the watcher had seen it again.
            if another { state.files.noteSeenAgain(path) }
        case .cancelled:
            // By a stop, or (a claim in its slot) by an outage: then it waits again, in its place.
            if takingWork {
                state.files.enqueue(path)
                letGo(path, requeued: true)
                return
            }
        }
        letGo(path, requeued: false)
    }

    /// A held file is let go: if the watcher saw its name again meanwhile, that name is checked
    /// once more. One that waits (in line, delayed, or apart for our credentials) stays as it is.
    mutating func letGo(_ path: RelativePath, requeued: Bool) {
        let seenAgain = state.files.takeSeenAgain(path)
        switch state.files.stage(of: path) {
        case nil, .waiting?, .delayed?, .awaitingCredentials?:
            return
        default:
            if seenAgain && !requeued && takingWork && state.retries.stage(of: path) != nil {
                // Filed in retry/ under this name: the name's file comes back by its move back,
                // and a claim now would run beside that move. Checked once the move has ended,
                // with the rank it had (a free slot goes by `order` then too).
                let rank = state.files.rank(of: path)
                state.files.remove(path)
                state.foundWhileMovingBack[path] = rank.map { policy.order.file(path, rank: $0) } ?? QueuedFile(path)
            } else if seenAgain && !requeued && takingWork {
                state.files.enqueue(path, quiet: true)
            } else {
                state.files.remove(path)
            }
        }
    }

    /// A claim that found its file unreadable: filed as failed, no record of an attempt open.
    mutating func settle(_ path: RelativePath, _ settlement: Settlement) {
        state.files.move(path, to: .settling(recordOpen: false, awaitingCredentials: false))
        effects.append(.settle(path, settlement))
    }

    mutating func settled(_ path: RelativePath, _ report: SettleReport) {
        // A file refused for our credentials waits apart until the doubt is settled.
        let refused = if case .settling(_, true)? = state.files.stage(of: path) { true } else { false }
        if refused { state.files.move(path, to: .awaitingCredentials) }
        switch report {
        case .filed(_, let target, let due):
            if let due, policy.mode == .daemon { scheduleRetry(RetryEntry(path: target, due: due)) }
            letGo(path, requeued: false)
        case .requeued:
            if takingWork && !refused { state.files.enqueue(path) }
            letGo(path, requeued: true)
        case .failed:
            letGo(path, requeued: false)
        case .changedDuringMove(let change, let beside):
            // Content never sent is never filed: it stays queued as changed, and is sent again.
            if let beside {
                log(.warn, "file changed after its upload; uploading it again beside the new file under its name",
                    ["file": path.logSafe, "change": change, "queued_as": beside.path.logSafe])
            } else {
                log(.warn, "file changed after its upload; uploading it again", ["file": path.logSafe, "change": change])
            }
            effects.append(.settle(path, .changed(change)))
            if let beside { queue([beside]) }
        }
    }

    // MARK: Retries

    mutating func scheduleRetry(_ entry: RetryEntry) {
        switch policy.mode {
        case .daemon:
            state.retries.hold(entry.path, due: entry.due)
        case .once:
            // A cron run takes the retries due when it started, and no others.
            if let cutoff = state.onceCutoff, entry.due <= cutoff, state.phase == .running, state.window?.open != false {
                state.retries.moveBack(entry.path)
                effects.append(.moveBack(entry.path))
            }
        }
    }

    // MARK: Timers and starting work

    mutating func fireTimers() {
        switch state.phase {
        case .stopping(let deadline):
            if !state.graceOver && now.mono >= deadline && !state.files.slots.isEmpty {
                state.graceOver = true
                log(.warn, "shutdown grace over; aborting uploads in flight (they stay queued)")
                effects.append(.cancelUploads(state.files.slots.sorted()))
            }
            return
        case .stopped:
            return
        case .running:
            break
        }
        if case .offline(_, _, let nextProbe) = state.reachability, state.probing == nil, now.mono >= nextProbe {
            startProbe()
        }
        fireChores()
        for (path, at) in state.files.delayed where at <= now.mono {
            if takingWork { state.files.enqueue(path) } else { state.files.remove(path) }
        }
        guard takingWork, state.mayStart(policy), policy.mode == .daemon else { return }
        let files = state.files
        for path in state.retries.takeDue(at: now.wall, claimRuns: { files.isClaiming($0) }) { effects.append(.moveBack(path)) }
    }

    /// Hands out transfer slots to claimed files and claims ahead as far as `claimAhead` allows;
    /// with no claims ahead, gives each free slot the next waiting file, claimed and sent by one job.
    /// Nothing starts while the profile is paused (`ProfileState.mayStart`): unreachable, a route
    /// by a foreign interface, credentials refused (but for one trial at a time), or outside the upload window.
    mutating func startWork() {
        guard takingWork else { return }
        guard state.mayStart(policy) else { return startTrial() }
        while state.files.slots.count < policy.concurrency, recordFree, let first = state.files.ready.first,
              !betterClaimRunning(than: first), let (path, since) = state.files.sendFirstReady() {
            effects.append(.upload(path, uploadPlan(readySince: since)))
        }
        while state.files.claimsAhead.count + state.files.ready.count < policy.claimAhead,
              let path = state.files.claimNext(inSlot: false) {
            if waitsForMoveBack(path) { continue }
            effects.append(.claim(path))
        }
        // Nothing claimed ahead (the runner's way): each free slot claims and sends its own file.
        while policy.claimAhead == 0, state.files.slots.count < policy.concurrency, recordFree,
              let path = state.files.claimNext(inSlot: true) {
            if waitsForMoveBack(path) { continue }
            effects.append(.claimAndUpload(path, uploadPlan(readySince: nil)))
        }
    }

    /// A file of this name is moving back from retry/: the claim just taken from the line is not
    /// started, and the name is looked at again once the move back has ended, with its rank (a
    /// claim beside the move could be finishing that very file's cut move into retry/).
    mutating func waitsForMoveBack(_ path: RelativePath) -> Bool {
        guard case .movingBack? = state.retries.stage(of: path) else { return false }
        let rank = state.files.rank(of: path)
        state.files.remove(path)
        state.foundWhileMovingBack[path] = rank.map { policy.order.file(path, rank: $0) } ?? QueuedFile(path)
        return true
    }

    /// How a slot's job goes about its file. The record of the attempt its claim wrote aside (at
    /// `readySince`; nil: none, the claim was in the slot) stands for the attempt's start only
    /// while younger than `preparedRecordLifetime`; an older one is discarded and a fresh one
    /// written. A file delivered unchanged is filed in sent/ by the job itself — what `attempted`
    /// would decide for that outcome, ordered ahead so the common case costs no settle job.
    func uploadPlan(readySince: Double?) -> UploadPlan {
        let fresh = readySince.map { now.mono - $0 <= policy.preparedRecordLifetime } ?? false
        return UploadPlan(record: fresh ? .prepared : .fresh, onDelivered: .fileInSent)
    }

    /// Fewer than `concurrency` records say `uploading`: another may. A slot frees as its request
    /// ends, its record is rewritten a moment later by the settle; the next upload in the slot
    /// waits for that, so the spool never shows more uploads than there are slots.
    var recordFree: Bool { state.files.openRecords < policy.concurrency }

    /// Whether a claim ahead for a file that ranks before `path` is still running: claims finish
    /// in any order (a big file hashes longer), so a free slot waits for it rather than let a
    /// later file overtake — `order` holds for the requests, not only for the claims.
    func betterClaimRunning(than path: RelativePath) -> Bool {
        guard !state.files.claimsAhead.isEmpty else { return false }
        let key = (state.files.rank(of: path) ?? 0, path)
        return state.files.claimsAhead.contains { claim in (claim.value, claim.key) < key }
    }

    mutating func checkEnd() {
        switch state.phase {
        case .stopping:
            if state.files.slots.isEmpty && state.files.claimsAhead.isEmpty && state.files.settling == 0 && state.retries.movingBack == 0 {
                state.phase = .stopped
                effects.append(.stopped)
            }
        case .running:
            if policy.mode == .once && state.recovered && !state.drainedReported && state.isIdle {
                state.drainedReported = true
                effects.append(.drained)
            }
        case .stopped:
            break
        }
    }

    mutating func stop(grace: TimeInterval) {
        guard state.phase == .running else { return }
        state.phase = .stopping(deadline: now.mono + max(0, grace))
        state.files.removeAllWaiting()
        for path in state.files.delayed.keys { state.files.remove(path) }
        state.files.unquietClaims()
        for path in state.files.awaitingCredentials {
            if case .settling(let recordOpen, _)? = state.files.stage(of: path) {
                state.files.move(path, to: .settling(recordOpen: recordOpen, awaitingCredentials: false))
            } else {
                state.files.remove(path)
            }
        }
        let claims = state.files.claims
        if !claims.isEmpty { effects.append(.cancelClaims(claims)) }
        for path in state.files.ready {
            effects.append(.release(path))
            state.files.remove(path)
        }
    }

    // MARK: Logging

    mutating func log(_ level: LogLevel, _ message: String, _ metadata: KeyValuePairs<String, String> = [:]) {
        effects.append(.log(LogLine(level, message, metadata)))
    }

    mutating func warnOnce(_ path: RelativePath, _ message: String) {
        guard state.warned.insert(path).inserted else { return }
        log(.warn, message, ["file": path.logSafe])
    }

    mutating func logFiled(_ path: RelativePath, failed: Bool, reason: String, attempts: Int, next: Date?, id: String = "") {
        log(.warn, failed ? "failed; moved to retry/ (needs uploader retry)" : "will retry",
            ["file": path.logSafe, "id": id, "attempts": String(attempts),
             "next_attempt_at": next.map(Timestamp.format) ?? "-", "error": reason])
    }
}
