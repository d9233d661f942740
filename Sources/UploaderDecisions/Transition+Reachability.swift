import UploaderValues

/// Reachability: one outage is one log line, one backoff sequence of probes, and one pause,
/// whatever the number of workers that ran into it.
extension Transition {
    mutating func goOffline(_ reason: String) {
        state.lastProblem = reason
        guard state.reachability.isOnline else { return }
        state.outages += 1
        state.reachability = .offline(since: now.mono, reason: reason, nextProbe: now.mono + policy.probeDelay(offlineFor: 0))
        log(.warn, "destination unreachable; profile paused, files stay queued", ["error": reason])
        if !state.files.slots.isEmpty { effects.append(.cancelUploads(state.files.slots.sorted())) }
        releaseReady()
    }

    /// Lets go of claimed files that wait for a slot: a pause may last for hours, during which
    /// their names may be renamed or deleted; they are claimed afresh when work resumes.
    mutating func releaseReady() {
        for path in state.files.ready {
            effects.append(.release(path))
            if takingWork { state.files.enqueue(path) } else { state.files.remove(path) }
        }
    }

    mutating func goOnline() {
        guard case .offline(let since, _, _) = state.reachability else { return }
        state.reachability = .online
        log(.info, "destination reachable again; resuming", ["offline_seconds": LogNumbers.fixed(now.mono - since, places: 1)])
    }

    mutating func startProbe() {
        state.probesSent += 1
        let ticket = ProbeTicket(number: state.probesSent, outage: state.outages)
        state.probing = ticket
        state.probeAgain = false
        effects.append(.probe(ticket))
    }

    mutating func probed(_ ticket: ProbeTicket, problem: String?) {
        guard state.probing == ticket else { return }
        state.probing = nil
        guard state.phase == .running else { return }
        if let problem {
            state.lastProblem = problem
            switch state.reachability {
            case .online:
                goOffline(problem)
            case .offline(let since, _, _):
                let delay = policy.probeDelay(offlineFor: now.mono - since)
                state.reachability = .offline(since: since, reason: problem, nextProbe: now.mono + delay)
            }
        } else if !state.reachability.isOnline {
            if ticket.outage == state.outages {
                goOnline()
            } else {
                // Sent before this outage began: its answer says nothing about it. Ask again now.
                state.probeAgain = true
            }
        }
        if state.probeAgain && state.probing == nil { startProbe() }
    }
}
