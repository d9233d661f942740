import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

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
        return transition.effects
    }

    /// When the next timer is due — a retry or a window's edge (wall clock), a probe, a delayed
    /// file or the end of the shutdown grace (monotonic) — as seconds from `now`; nil when nothing is timed.
    package static func nextDeadline(_ state: ProfileState, policy: ProfilePolicy, now: Instant) -> Double? {
        var soonest: Double?
        func consider(_ seconds: Double) { soonest = min(soonest ?? seconds, seconds) }
        switch state.phase {
        case .running:
            if policy.mode == .daemon && !state.closed && state.mayStart(policy),
               let due = state.retryDue.earliest {
                consider(due.timeIntervalSince(now.wall))
            }
            // The window opens or closes: wake then, without polling.
            if let until = state.window?.until { consider(until.timeIntervalSince(now.wall)) }
            if case .offline(_, _, let nextProbe) = state.reachability, state.probing == nil {
                consider(nextProbe - now.mono)
            }
            if let at = state.delayed.values.min() { consider(at - now.mono) }
            // Paused for our credentials: the next trial (one that is due starts at once, or waits
            // for the upload still running).
            if case .rejected(_, _, _, let at) = state.credentials, at > now.mono, !state.closed { consider(at - now.mono) }
        case .stopping(let deadline):
            if !state.graceOver && !state.sending.isEmpty { consider(deadline - now.mono) }
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
            state.openRecords.remove(path)
        case .settled(let path, let report):
            state.openRecords.remove(path)
            settled(path, report)
        case .movedBack(let from, let to):
            state.movingBack.remove(from)
            if let to {
                queue([to])
            } else {
                log(.debug, "retry entry no longer in retry/", ["file": from.logSafe])
            }
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
        var batch: [(path: RelativePath, rank: Int64)] = []
        batch.reserveCapacity(files.count)
        for file in files {
            let path = file.path
            let rank = policy.order.rank(file)
            if state.holds(path) {
                state.seenAgain.insert(path)
                state.waiting.remember(path, rank: rank)
            } else if state.delayed[path] == nil {
                batch.append((path, rank))
            } else {
                state.waiting.remember(path, rank: rank)
            }
        }
        state.waiting.add(batch)
    }

    mutating func warnIgnored(_ directories: [RelativePath]) {
        for path in directories {
            warnOnce(path, "directory in a non-recursive outbox ignored (set recursive = yes to upload its files)")
        }
    }

    mutating func claimed(_ path: RelativePath, _ report: ClaimReport) {
        state.claiming.remove(path)
        // Claimed in its slot (`claimAndUpload`): ready, its job goes on to send it; else the slot is free.
        let inSlot = state.sending.contains(path)
        if inSlot && report == .ready { return }
        if inSlot {
            state.sending.remove(path)
            state.openRecords.remove(path)
            // A trial that never got to send: the next file may be tried at once.
            if state.trial == path { state.trial = nil }
        }
        let quiet = state.quiet.remove(path) != nil
        switch report {
        case .ready:
            if takingWork {
                makeReady(path)
            } else {
                effects.append(.release(path))
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
        case .finishedByRecovery(let retry):
            if let retry { scheduleRetry(retry) }
        case .cancelled:
            // By a stop, or (a claim in its slot) by an outage: then it waits again, in its place.
            if takingWork {
                state.waiting.add(path)
                letGo(path, requeued: true)
                return
            }
        }
        letGo(path, requeued: false)
    }

    /// A held file is let go: if the watcher saw its name again meanwhile, that name is checked once more.
    mutating func letGo(_ path: RelativePath, requeued: Bool) {
        defer {
            if !state.waiting.contains(path) && state.delayed[path] == nil && !state.awaitingCredentials.contains(path) {
                state.waiting.forget(path)
            }
        }
        guard state.seenAgain.remove(path) != nil, !requeued, takingWork, !state.waiting.contains(path) else { return }
        state.waiting.add(path)
        state.quiet.insert(path)
    }

    mutating func settle(_ path: RelativePath, _ settlement: Settlement) {
        state.settling.insert(path)
        effects.append(.settle(path, settlement))
    }

    mutating func settled(_ path: RelativePath, _ report: SettleReport) {
        state.settling.remove(path)
        switch report {
        case .filed(_, let target, let due):
            if let due, policy.mode == .daemon { scheduleRetry(RetryEntry(path: target, due: due)) }
            letGo(path, requeued: false)
        case .requeued:
            // A file refused for our credentials waits apart until the doubt is settled.
            if takingWork && !state.awaitingCredentials.contains(path) { state.waiting.add(path) }
            letGo(path, requeued: true)
        case .failed:
            letGo(path, requeued: false)
        }
    }

    // MARK: Retries

    mutating func scheduleRetry(_ entry: RetryEntry) {
        switch policy.mode {
        case .daemon:
            state.retryDue.set(entry.path, due: entry.due)
        case .once:
            // A cron run takes the retries due when it started, and no others.
            if let cutoff = state.onceCutoff, entry.due <= cutoff, state.phase == .running, state.window?.open != false {
                state.movingBack.insert(entry.path)
                effects.append(.moveBack(entry.path))
            }
        }
    }

    // MARK: Timers and starting work

    mutating func fireTimers() {
        switch state.phase {
        case .stopping(let deadline):
            if !state.graceOver && now.mono >= deadline && !state.sending.isEmpty {
                state.graceOver = true
                log(.warn, "shutdown grace over; aborting uploads in flight (they stay queued)")
                effects.append(.cancelUploads(state.sending.sorted()))
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
        for (path, at) in state.delayed where at <= now.mono {
            state.delayed[path] = nil
            if takingWork { state.waiting.add(path) }
        }
        guard takingWork, state.mayStart(policy), policy.mode == .daemon else { return }
        for path in state.retryDue.takeDue(at: now.wall) {
            state.movingBack.insert(path)
            effects.append(.moveBack(path))
        }
    }

    /// Hands out transfer slots to claimed files and claims ahead as far as `claimAhead` allows;
    /// with no claims ahead, gives each free slot the next waiting file, claimed and sent by one job.
    /// Nothing starts while the profile is paused (`ProfileState.mayStart`): unreachable, a route
    /// by a foreign interface, credentials refused (but for one trial at a time), or outside the upload window.
    mutating func startWork() {
        guard takingWork else { return }
        guard state.mayStart(policy) else { return startTrial() }
        while state.sending.count < policy.concurrency, recordFree, let first = state.ready.first, !betterClaimRunning(than: first) {
            let path = state.ready.removeFirst()
            state.sending.insert(path)
            state.openRecords.insert(path)
            effects.append(.upload(path))
        }
        while state.claimsAhead + state.ready.count < policy.claimAhead, let path = state.waiting.popFirst() {
            state.claiming.insert(path)
            effects.append(.claim(path))
        }
        // Nothing claimed ahead (the runner's way): each free slot claims and sends its own file.
        while policy.claimAhead == 0, state.sending.count < policy.concurrency, recordFree, let path = state.waiting.popFirst() {
            state.sending.insert(path)
            state.openRecords.insert(path)
            state.claiming.insert(path)
            effects.append(.claimAndUpload(path))
        }
    }

    /// Fewer than `concurrency` records say `uploading`: another may. A slot frees as its request
    /// ends, its record is rewritten a moment later by the settle; the next upload in the slot
    /// waits for that, so the spool never shows more uploads than there are slots.
    var recordFree: Bool { state.openRecords.count < policy.concurrency }

    /// Whether a claim ahead for a file that ranks before `path` is still running: claims finish
    /// in any order (a big file hashes longer), so a free slot waits for it rather than let a
    /// later file overtake — `order` holds for the requests, not only for the claims.
    func betterClaimRunning(than path: RelativePath) -> Bool {
        let key = (state.waiting.rank(of: path) ?? 0, path)
        return state.claiming.contains { other in
            !state.sending.contains(other) && (state.waiting.rank(of: other) ?? 0, other) < key
        }
    }

    mutating func checkEnd() {
        switch state.phase {
        case .stopping:
            if state.sending.isEmpty && state.claiming.isEmpty && state.settling.isEmpty && state.movingBack.isEmpty {
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
        state.waiting.removeAll()
        state.delayed = [:]
        state.quiet = []
        state.awaitingCredentials = []
        if !state.claiming.isEmpty { effects.append(.cancelClaims(state.claiming.sorted())) }
        for path in state.ready { effects.append(.release(path)) }
        state.ready = []
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
