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
/// would cost more than the whole upload's bookkeeping. A lock held for a few assignments is
/// the cheapest way to share it; the board is the only state it guards.
package final class InFlightBoard: Sendable {
    private struct Entry {
        var display: String
        var startedAt: String
        var meter: TransferMeter
    }

    private let entries = Mutex<[RelativePath: Entry]>([:])

    package init() {}

    /// An upload of `path` (`size` bytes) starts: wall time `started` for `started_at`, monotonic `now` for the rate.
    package func begin(_ path: RelativePath, size: Int64, started: Date, now: Double) {
        let entry = Entry(display: path.display, startedAt: Timestamp.format(started), meter: TransferMeter(size: size, startedAt: now))
        entries.withLock { $0[path] = entry }
    }

    /// libcurl reported `sent` bytes of `path` sent so far.
    package func progress(_ path: RelativePath, sent: Int64, now: Double) {
        entries.withLock { $0[path]?.meter.record(sent, at: now) }
    }

    package func end(_ path: RelativePath) {
        entries.withLock { _ = $0.removeValue(forKey: path) }
    }

    /// Every upload in flight at monotonic `now`, oldest first.
    package func files(at now: Double) -> [InFlightFile] {
        let current = entries.withLock { Array($0.values) }
        return current.sorted { ($0.startedAt, $0.display) < ($1.startedAt, $1.display) }.map { entry in
            InFlightFile(path: entry.display, size: entry.meter.size, bytesSent: entry.meter.sent,
                         rateBytesPerSecond: Int64(entry.meter.rate(at: now).rounded()), etaSeconds: entry.meter.eta(at: now),
                         startedAt: entry.startedAt)
        }
    }
}
