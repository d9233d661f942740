import Synchronization
import UploaderSupport
import UploaderCore

/// The owner's deadlines in a schedule: production's `DeadlineTimer`, its thread run by the
/// schedule's `BatonScheduler` and waiting on the simulated clock, with what the world needs to
/// see of it beside — the deadline the owner last set and not yet ticked (`deadlinesKept`), and
/// whether its thread has ended (a process's timer is run out before the process is dropped).
final class SimTicker: DeadlineTicker, @unchecked Sendable {
    // Used by the thread holding the baton only.
    private let clock: SimClock
    private let baton: BatonScheduler
    private let timer: DeadlineTimer
    private let threadEnded = EndFlag()
    private var started = false
    /// The deadline the owner set (monotonic seconds) that has not ticked yet; nil: none.
    private(set) var due: Double?

    /// When the deadline is sure to have woken the timer: one that moved sooner by less than
    /// `DeadlineTimer.tolerance` wakes it only at the deadline it had before.
    var wakesBy: Double? { due.map { $0 + DeadlineTimer.tolerance * 1.01 } }

    init(clock: SimClock, baton: BatonScheduler) {
        self.clock = clock
        self.baton = baton
        timer = DeadlineTimer(clock: clock, scheduler: EndingThreads(inner: baton, ended: threadEnded))
    }

    func start(name: String, tick: @escaping @Sendable () -> Void) {
        started = true
        timer.start(name: name) { [self] in
            due = nil
            tick()
        }
    }

    func wake(in seconds: Double?) {
        due = seconds.map { clock.monotonic + $0 }
        timer.wake(in: seconds)
    }

    func stop() {
        due = nil
        timer.stop()
    }

    /// Stops the timer and lets its thread run until it has ended (the world holds the baton).
    func finish() {
        stop()
        guard started else { return }
        var turns = 0
        while turns < 100_000, !threadEnded.value.load(ordering: .acquiring) {
            baton.letWorkersRun()
            turns += 1
        }
    }
}

/// Whether a thread has ended.
private final class EndFlag: Sendable {
    let value = Atomic<Bool>(false)
}

/// A scheduler that notes when the thread it started has ended.
private struct EndingThreads: Scheduler, @unchecked Sendable {
    let inner: BatonScheduler
    let ended: EndFlag

    func makeWakeUp() -> any WakeUp { inner.makeWakeUp() }

    func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
        inner.startThread(named: name) { [self] in
            SimClock.markTimerThread()
            body()
            ended.value.store(true, ordering: .releasing)
        }
    }
}
