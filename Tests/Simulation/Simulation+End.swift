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
