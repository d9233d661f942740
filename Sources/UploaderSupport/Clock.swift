import Foundation
import Synchronization

/// The one source of time for the whole program, passed in wherever time is read.
///
/// Wall time is what gets written down (manifests, retry due dates, logs); monotonic
/// seconds are what gets measured (probe backoff, shutdown grace, durations), so a clock
/// step by NTP never shortens a grace period. Tests pass a clock they advance by hand.
///
/// Waiting is the clock's too: a retry delay, a hook's timeout or a pause between rounds ends
/// when this clock says, so a test clock decides when, and nothing sleeps on a time of its own.
package protocol Clock: Sendable {
    /// Wall-clock time.
    var now: Date { get }
    /// Seconds on a clock that never goes back (CLOCK_MONOTONIC).
    var monotonic: Double { get }
    /// Blocks the calling thread until `monotonic` reaches `deadline` or `latch` opens, whichever
    /// comes first; true when the latch is open.
    func wait(for latch: Latch?, until deadline: Double) -> Bool
}

extension Clock {
    /// Both readings at once, as the transition function takes them.
    package var instant: Instant { Instant(wall: now, mono: monotonic) }

    /// Blocks the calling thread until `monotonic` reaches `deadline`.
    package func sleep(until deadline: Double) { _ = wait(for: nil, until: deadline) }
}

/// The real clocks: `Date()` and `CLOCK_MONOTONIC`.
package struct SystemClock: Clock {
    package init() {}

    package var now: Date { Date() }

    package var monotonic: Double { KernelClock.monotonicSeconds }

    package func wait(for latch: Latch?, until deadline: Double) -> Bool {
        guard let latch else {
            // Nothing can end it sooner: one sleep to the deadline, on the clock `monotonic` reads.
            KernelClock.sleep(until: deadline)
            return false
        }
        let woken = SystemScheduler.system.makeWakeUp()
        guard latch.notify(woken) else { return true }
        defer { latch.forget(woken) }
        while true {
            let left = deadline - monotonic
            if left <= 0 { return latch.isOpen }
            if woken.wait(until: .now() + left) { return true }
        }
    }
}

/// The waiting half of a clock moved by hand (tests, the simulator): the threads waiting on it,
/// each woken whenever the clock moves to look at the time again.
package final class HandMovedSleepers: Sendable {
    private let sleeping = Mutex<[ObjectIdentifier: any WakeUp]>([:])
    private let scheduler: any Scheduler

    package init(scheduler: any Scheduler = .system) { self.scheduler = scheduler }

    /// How many threads wait on the clock now (a test waits for a retry to be waiting).
    package var count: Int { sleeping.withLock { $0.count } }

    /// The clock has moved: every thread waiting looks at the time again.
    package func clockMoved() {
        for wake in sleeping.withLock({ Array($0.values) }) { wake.signal() }
    }

    /// `Clock.wait(for:until:)` for a clock whose `monotonic` is `now()`: only `clockMoved` and
    /// the latch end it.
    package func wait(for latch: Latch?, until deadline: Double, now: () -> Double) -> Bool {
        let woken = scheduler.makeWakeUp()
        sleeping.withLock { $0[ObjectIdentifier(woken)] = woken }
        defer {
            _ = sleeping.withLock { $0.removeValue(forKey: ObjectIdentifier(woken)) }
            latch?.forget(woken)
        }
        if let latch, !latch.notify(woken) { return true }
        while true {
            if latch?.isOpen == true { return true }
            if now() >= deadline { return false }
            woken.wait()
        }
    }
}
