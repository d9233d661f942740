/// The end of a schedule comes as soon as there is nothing left to check: once the faults have
/// stopped, nothing runs and every end check already holds, more simulated time only turns
/// window edges and empty passes over sent/.
extension Simulation {
    /// What the end checks read, in brief: the disk's operations, the server's requests and the
    /// hooks started. While it stays the same, a trial that failed would fail again.
    struct EndChecksInput: Equatable {
        var diskOperations: Int
        var requests: Int
        var hookRuns: Int
    }

    var endChecksInput: EndChecksInput {
        EndChecksInput(diskOperations: disk.operations, requests: server.requests.count, hookRuns: hookLog.runs.count)
    }

    /// Whether every check of `Invariant.atTheEnd` holds now; records no violation. Not tried
    /// again while nothing the checks read has changed since the last failed trial (`failedOn`):
    /// a schedule that never settles would otherwise read the whole spool at every tick.
    func endChecksPassNow(failedOn: inout EndChecksInput?) -> Bool {
        let input = endChecksInput
        guard input != failedOn else { return false }
        trialFailed = false
        defer { trialFailed = nil }
        // The cheapest telling check first: a file still queued or due again fails it.
        check([Invariant.everyFileSettles] + Invariant.atTheEnd)
        if trialFailed == true { failedOn = input }
        return trialFailed == false
    }
}

/// When the end phase tries its checks again after they failed: each failure doubles the wait,
/// from a second of simulated time up to five minutes. A schedule that settles is seen settled
/// soon after; one that never will (a planted bug) costs a few dozen reads of the spool instead
/// of one at every tick of a timer that fires each second.
struct EndChecksTrials {
    private var next: Double
    private var wait = 1.0

    init(from now: Double) { next = now }

    func due(at now: Double) -> Bool { now >= next }

    mutating func failed(at now: Double) {
        next = now + wait
        wait = min(wait * 2, 300)
    }
}
