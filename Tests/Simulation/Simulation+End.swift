/// The end of a schedule comes as soon as there is nothing left to check: once the faults have
/// stopped, nothing runs and every end check already holds, more simulated time only turns
/// window edges and empty passes over sent/.
extension Simulation {
    /// Whether every check of `Invariant.atTheEnd` holds now; records no violation.
    func endChecksPassNow() -> Bool {
        trialFailed = false
        defer { trialFailed = nil }
        // The cheapest telling check first: a file still queued or due again fails it.
        check([Invariant.everyFileSettles] + Invariant.atTheEnd)
        return trialFailed == false
    }
}
