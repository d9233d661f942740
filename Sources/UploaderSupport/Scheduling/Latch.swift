import Dispatch
import Synchronization

/// A one-way signal: shut until `open()`, then open for good. Threads wait for it on a `Clock`
/// with a deadline (`Clock.wait(for:until:)`), so what they wait for — a child's exit, an
/// upload's stop, the daemon's stop — ends the wait at once, with no polling.
///
/// Not a `Monitor`: a wait on a clock waits for the latch *or* the clock, so the latch signals
/// the waiter's own wake-up (made by the clock's `Scheduler`), whichever of the two comes first.
package final class Latch: Sendable {
    private let opened = Atomic<Bool>(false)
    /// The wake-ups of the threads waiting, each signalled once when the latch opens.
    private let waiters = Mutex<[ObjectIdentifier: any WakeUp]>([:])

    package init() {}

    package var isOpen: Bool { opened.load(ordering: .acquiring) }

    /// Opens the latch and wakes every thread waiting for it; opening it again does nothing.
    package func open() {
        opened.store(true, ordering: .releasing)
        let woken = waiters.withLock { waiters in
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for wake in woken { wake.signal() }
    }

    /// Has `wake` signalled once when the latch opens; false (and no signal) when it is open already.
    package func notify(_ wake: any WakeUp) -> Bool { notify(wake, as: ObjectIdentifier(wake)) }

    private func notify(_ wake: any WakeUp, as key: ObjectIdentifier) -> Bool {
        waiters.withLock { waiters in
            // Looked at under the lock: `open` takes it after setting the flag, so either this
            // sees the latch open or `open` sees this wake-up.
            guard !isOpen else { return false }
            waiters[key] = wake
            return true
        }
    }

    /// Stops notifying `wake` (its thread no longer waits).
    package func forget(_ wake: any WakeUp) {
        _ = waiters.withLock { $0.removeValue(forKey: ObjectIdentifier(wake)) }
    }

    /// Blocks until the latch opens, however long that takes (a child killed with SIGKILL).
    package func wait(scheduler: any Scheduler = .system) {
        let wake = scheduler.makeWakeUp()
        guard notify(wake) else { return }
        wake.wait()
    }
}
