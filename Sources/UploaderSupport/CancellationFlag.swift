import Synchronization

/// A thread-safe "stop now" flag, set by the owner (shutdown, destination gone) and checked
/// by long work on other threads: a transfer's progress callback, a hash between chunks. A wait
/// on a `Clock` for its `latch` (a retry's pause) ends when it is set.
package final class CancellationFlag: Sendable {
    /// Thrown by work that noticed the flag.
    package struct Cancelled: Error, Sendable {
        package init() {}
    }

    /// Open once cancelled.
    package let latch = Latch()

    package init() {}

    package func cancel() { latch.open() }

    package var isCancelled: Bool { latch.isOpen }
}
