import Synchronization
import UploaderSupport

/// Sends the owner a tick when its next deadline comes, on the owner's own clock: a thread of
/// its own (where no `ServiceLoop` waits for every owner's deadlines) that waits on the injected
/// `Clock` with the injected `Scheduler`'s wake-ups, so a clock moved by hand (tests, the
/// simulator) is what makes it tick, and a deterministic scheduler decides when it runs.
///
/// Moving the deadline later or away costs nothing (the thread wakes at the old one, finds it
/// not yet due, and waits again); only an earlier one, or the stop, wakes it to look again.
package final class DeadlineTimer: DeadlineTicker {
    private struct Plan: Sendable {
        /// When to tick, in the clock's monotonic seconds (nil: not at all).
        var due: Double?
        var stopped = false
        /// Opened when the thread must look again at once (a sooner deadline, the stop); a new
        /// one takes its place.
        var nudge = Latch()
        /// Deadlines that came so far.
        var came = 0
    }

    /// How much sooner a deadline must come to wake the thread: one sooner by less is ticked up
    /// to this late (a deadline recomputed a moment later comes out the same give or take a little).
    package static let tolerance = 0.001

    private let plan = Mutex(Plan())
    private let clock: any Clock
    private let scheduler: any Scheduler

    package init(clock: any Clock, scheduler: any Scheduler = .system) {
        self.clock = clock
        self.scheduler = scheduler
    }

    package func start(name: String, tick: @escaping @Sendable () -> Void) {
        scheduler.startThread(named: name) { [self] in
            while true {
                let (due, stopped, nudge) = plan.withLock { ($0.due, $0.stopped, $0.nudge) }
                if stopped { return }
                guard let due else {
                    nudge.wait(scheduler: scheduler)
                    continue
                }
                guard clock.monotonic >= due else {
                    _ = clock.wait(for: nudge, until: due)
                    continue
                }
                let first = plan.withLock { plan -> Bool in
                    if plan.due == due { plan.due = nil }
                    plan.came += 1
                    return plan.came == 1
                }
                if first && PlantedBug.timerMissesFirstDeadline.isActive { continue }
                tick()
            }
        }
    }

    /// Ticks `seconds` from now on the clock (nil: no deadline).
    package func wake(in seconds: Double?) {
        let due = seconds.map { clock.monotonic + $0 }
        let opened = plan.withLock { plan -> Latch? in
            // Only a deadline at least `tolerance` sooner is worth a wake-up.
            let sooner = due.map { new in plan.due.map { new + Self.tolerance < $0 } ?? true } ?? false
            plan.due = due
            guard sooner else { return nil }
            defer { plan.nudge = Latch() }
            return plan.nudge
        }
        opened?.open()
    }

    package func stop() {
        let opened = plan.withLock { plan -> Latch in
            plan.stopped = true
            return plan.nudge
        }
        opened.open()
    }
}
