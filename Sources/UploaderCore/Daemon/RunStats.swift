import Foundation
import Synchronization

/// Counters of what one process run did, per profile: for `run --once` exit codes, the
/// closing summary line and the metrics file.
package final class RunStats: Sendable {
    package struct Snapshot: Sendable, Equatable {
        package var sent = 0
        package var retried = 0
        package var failed = 0
        package var bytesSent: Int64 = 0
        /// Upload durations (seconds) of sent files, bucketed for the metrics histogram.
        package var durationBuckets: [Int] = Array(repeating: 0, count: RunStats.durationBounds.count)
        package var durationCount = 0
        package var durationSum = 0.0
        package var leftQueuedOffline = false
    }

    package static let durationBounds: [Double] = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800]

    private let state = Mutex(Snapshot())

    package init() {}

    package func recordSent(bytes: Int64, seconds: Double) {
        state.withLock { s in
            s.sent += 1
            s.bytesSent += bytes
            s.durationCount += 1
            s.durationSum += seconds
            for (i, bound) in RunStats.durationBounds.enumerated() where seconds <= bound { s.durationBuckets[i] += 1 }
        }
    }

    package func recordRetry() { state.withLock { $0.retried += 1 } }
    package func recordFailed() { state.withLock { $0.failed += 1 } }
    package func recordLeftQueuedOffline() { state.withLock { $0.leftQueuedOffline = true } }

    package var snapshot: Snapshot { state.withLock { $0 } }
}
