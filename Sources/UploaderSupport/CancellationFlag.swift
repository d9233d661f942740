import Synchronization

/// A thread-safe "stop now" flag, set by the owner (shutdown, destination gone) and checked
/// by long work on other threads: a transfer's progress callback, a hash between chunks.
package final class CancellationFlag: Sendable {
    /// Thrown by work that noticed the flag.
    package struct Cancelled: Error, Sendable {
        package init() {}
    }

    private let cancelled = Atomic<Bool>(false)

    package init() {}

    package func cancel() { cancelled.store(true, ordering: .relaxed) }

    package var isCancelled: Bool { cancelled.load(ordering: .relaxed) }
}
