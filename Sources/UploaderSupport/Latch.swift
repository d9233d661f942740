import Dispatch
import Synchronization

/// A one-way signal: shut until `open()`, then open for good. Threads wait for it on a `Clock`
/// with a deadline (`Clock.wait(for:until:)`), so what they wait for — a child's exit, an
/// upload's stop, the daemon's stop — ends the wait at once, with no polling.
package final class Latch: Sendable {
    private let opened = Atomic<Bool>(false)
    /// The semaphores of the threads waiting, each signalled once when the latch opens.
    private let waiters = Mutex<[ObjectIdentifier: DispatchSemaphore]>([:])

    package init() {}

    package var isOpen: Bool { opened.load(ordering: .acquiring) }

    /// Opens the latch and wakes every thread waiting for it; opening it again does nothing.
    package func open() {
        opened.store(true, ordering: .releasing)
        let woken = waiters.withLock { waiters in
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for semaphore in woken { semaphore.signal() }
    }

    /// Has `semaphore` signalled once when the latch opens; false (and no signal) when it is open already.
    package func notify(_ semaphore: DispatchSemaphore) -> Bool {
        waiters.withLock { waiters in
            // Looked at under the lock: `open` takes it after setting the flag, so either this
            // sees the latch open or `open` sees this semaphore.
            guard !isOpen else { return false }
            waiters[ObjectIdentifier(semaphore)] = semaphore
            return true
        }
    }

    /// Stops notifying `semaphore` (its thread no longer waits).
    package func forget(_ semaphore: DispatchSemaphore) {
        _ = waiters.withLock { $0.removeValue(forKey: ObjectIdentifier(semaphore)) }
    }

    /// Blocks until the latch opens, however long that takes (a child killed with SIGKILL).
    package func wait() {
        let semaphore = DispatchSemaphore(value: 0)
        guard notify(semaphore) else { return }
        semaphore.wait()
    }
}
