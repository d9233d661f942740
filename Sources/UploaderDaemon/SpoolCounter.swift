import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore

/// Counts the running profiles' spools (outbox and retry/, not sent/, the sent ledger) on a thread
/// of its own, for the metrics file, systemd's STATUS= and the state file's counts: at most every 10 s, and never more than a tenth
/// of one core — a spool with 100,000 files takes seconds to count, and must not delay uploads,
/// signals or the watchdog.
package final class SpoolCounter: Sendable {
    private struct State {
        var latest: [String: SpoolCensus] = [:]
        var lastDuration: Double = 0
    }

    static let minimumInterval: TimeInterval = 10
    private let state = Mutex(State())
    /// Opens at `stop`: ends the pause between rounds.
    private let stopped = Latch()
    /// Opens when the counting thread has ended (or was never started): the process may exit then,
    /// not while the thread is in the middle of a count (an exit tearing down what a running
    /// thread still uses crashed `run --once` at its very end).
    private let ended = Latch()
    private let started = Mutex(false)
    private let logger: Logger

    private let clock: any Clock

    package init(logger: Logger, clock: any Clock) {
        self.logger = logger
        self.clock = clock
    }

    /// Counts in a loop until `stop`; `runners` gives the current set, `onUpdate` runs after each round.
    package func start(runners: @escaping @Sendable () -> [ProfileRunner], onUpdate: @escaping @Sendable () -> Void) {
        started.withLock { $0 = true }
        SystemScheduler.system.startThread(named: "spool-counter") { [self] in
            defer { ended.open() }
            while !stopped.isOpen {
                countNow(runners())
                onUpdate()
                let pause = max(Self.minimumInterval, state.withLock { $0.lastDuration } * 10)
                _ = clock.wait(for: stopped, until: clock.monotonic + pause)
            }
        }
    }

    /// Ends the rounds and waits for the counting thread to end (for at most `patience` seconds:
    /// a count of a huge spool is left to the exit then).
    package func stop(patience: TimeInterval = 5) {
        stopped.open()
        guard started.withLock({ $0 }) else { return }
        _ = clock.wait(for: ended, until: clock.monotonic + patience)
    }

    /// Counts every spool now, on the calling thread.
    package func countNow(_ runners: [ProfileRunner]) {
        let started = clock.monotonic
        var counted: [String: SpoolCensus] = [:]
        for runner in runners {
            counted[runner.profile.name] = SpoolCensus.take(runner.spool, ignore: runner.ignore, recursive: runner.profile.recursive,
                                                            now: clock.now, unlistable: DirectoryWalker.warning(logger))
        }
        let duration = clock.monotonic - started
        state.withLock {
            $0.latest = counted
            $0.lastDuration = duration
        }
    }

    /// The latest count of a profile's spool, if one was made.
    package func latest(_ profile: String) -> SpoolCensus? { state.withLock { $0.latest[profile] } }

    /// How long the last round took; the exit path recounts only when that was quick.
    package var lastDuration: Double { state.withLock { $0.lastDuration } }
}
