import Foundation
import Synchronization
import UploaderSupport
import UploaderSpool

/// The uploads of one profile in flight and how far each has come, for `status`: written by
/// the upload jobs (from libcurl's progress callback), read by the service reporter about once
/// a second.
///
/// Beside the owner, not inside it: progress decides nothing (the core never reads it), and
/// sending the owner an event for each of libcurl's callbacks — hundreds a second per upload —
/// would cost more than the whole upload's bookkeeping. Each upload gets its own `Tracker`, so a
/// callback takes one uncontended lock and no lookup; the board's own lock is taken only when an
/// upload starts or ends and when the reporter reads.
package final class InFlightBoard: Sendable {
    /// One upload's progress; its job holds it for the callbacks.
    package final class Tracker: Sendable {
        let display: String
        let startedAt: String
        let meter: Mutex<TransferMeter>

        init(display: String, startedAt: String, meter: TransferMeter) {
            self.display = display
            self.startedAt = startedAt
            self.meter = Mutex(meter)
        }

        /// libcurl reported `sent` bytes sent so far, at monotonic `now`.
        package func progress(_ sent: Int64, now: Double) {
            meter.withLock { $0.record(sent, at: now) }
        }
    }

    private let trackers = Mutex<[RelativePath: Tracker]>([:])

    package init() {}

    /// An upload of `path` (`size` bytes) starts: wall time `started` for `started_at`, monotonic `now` for the rate.
    package func begin(_ path: RelativePath, size: Int64, started: Date, now: Double) -> Tracker {
        let tracker = Tracker(display: path.display, startedAt: Timestamp.format(started), meter: TransferMeter(size: size, startedAt: now))
        trackers.withLock { $0[path] = tracker }
        return tracker
    }

    package func end(_ path: RelativePath) {
        trackers.withLock { _ = $0.removeValue(forKey: path) }
    }

    /// Every upload in flight at monotonic `now`, oldest first.
    package func files(at now: Double) -> [InFlightFile] {
        let current = trackers.withLock { Array($0.values) }
        return current.sorted { ($0.startedAt, $0.display) < ($1.startedAt, $1.display) }.map { tracker in
            let meter = tracker.meter.withLock { $0 }
            return InFlightFile(path: tracker.display, size: meter.size, bytesSent: meter.sent,
                                rateBytesPerSecond: Int64(meter.rate(at: now).rounded()), etaSeconds: meter.eta(at: now),
                                startedAt: tracker.startedAt)
        }
    }
}
