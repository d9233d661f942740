/// Where an owner's deadlines come from: told the next one, it calls `tick` when it comes. The
/// owner's own timer thread by default; in the daemon, the one thread that waits for every
/// profile's deadlines and the daemon's own (`ServiceLoop`).
package protocol DeadlineTicker: Sendable {
    /// Calls `tick` at each deadline `wake(in:)` sets from now on, until `stop`.
    func start(name: String, tick: @escaping @Sendable () -> Void)
    /// Ticks `seconds` from now (nil: no deadline), instead of at the deadline set before.
    func wake(in seconds: Double?)
    /// No more ticks.
    func stop()
}

/// Makes the tickers of the owners of one process.
package protocol DeadlineTickers: Sendable {
    func makeTicker() -> any DeadlineTicker
}
