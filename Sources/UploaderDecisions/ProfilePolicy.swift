import Foundation
import UploaderValues

/// The settings the transition function decides with: a profile's limits and timings,
/// taken from its config once (`ProfilePolicy(profile:mode:)`, beside the runner), so the core
/// never reads a `Profile` itself.
package struct ProfilePolicy: Sendable, Equatable {
    /// `run` keeps going; `run --once` drains and stops at the first sign of an unreachable destination.
    package enum Mode: Sendable, Equatable { case daemon, once }

    package var mode: Mode
    /// Requests in flight at most (`concurrency`).
    package var concurrency: Int
    /// Files claimed (opened, hashed) ahead of a free transfer slot, claims running included:
    /// claims and settles run on threads of their own beside the transfers, so more fsyncs are in
    /// flight at once. With none (`0`), a slot's own job claims, sends and files its file
    /// (`claimAndUpload`): fewer thread hand-offs, but on this machine's ext4 without a journal
    /// 2,000 × 4 KiB took about 1.4× as long (fsyncs, not hand-offs, bound small files), so the
    /// runner claims ahead (the simulator too). `claimAndUpload` remains for the one file of a
    /// trial while our credentials are refused, when none is ready (`startTrial`).
    package var claimAhead: Int
    package var maxAttempts: Int
    package var backoff: TimeInterval
    package var maxBackoff: TimeInterval
    /// Probe backoff while offline: a fraction of the time offline so far, within these bounds.
    package var probeDelayMin: TimeInterval = 1
    package var probeDelayMax: TimeInterval = 30
    package var probeDelayFraction: Double = 0.25
    /// A file whose manifest could not be written (disk full) is tried again after this long.
    package var unwritableRetry: TimeInterval = 5
    /// How long the record of an attempt a claim wrote aside stands for the attempt's start: an
    /// upload that waited longer for its slot writes a fresh one.
    package var preparedRecordLifetime: TimeInterval = 1
    /// Which waiting file starts next (`order`).
    package var order: UploadOrder = .oldest
    /// When uploads may start (`upload_window`), in `timeZone`'s local time.
    package var windows = UploadWindows()
    /// The zone local times are read in: the machine's (`ProfilePolicy(profile:mode:)` reads it,
    /// the core never does), or a test's; UTC until set.
    package var timeZone: TimeZone = .gmt
    /// Interfaces the route to the destination may leave by (`interfaces`); empty = any.
    package var interfaces: Set<String> = []
    /// `keep_sent`, `keep_sent_bytes` (daemon): when passes over sent/ are due; nil: no retention.
    package var retention: RetentionPacing?
    /// `rescan` (daemon): seconds between periodic rescans of the outbox; nil: none.
    package var rescanEvery: TimeInterval?

    package init(mode: Mode, concurrency: Int, claimAhead: Int = 16, maxAttempts: Int, backoff: TimeInterval, maxBackoff: TimeInterval) {
        self.mode = mode
        self.concurrency = max(1, concurrency)
        self.claimAhead = max(0, claimAhead)
        self.maxAttempts = maxAttempts
        self.backoff = backoff
        self.maxBackoff = maxBackoff
    }

    /// How long to wait before the next probe after `offlineFor` seconds offline.
    ///
    /// One outage is one sequence, whatever the number of workers: the delay grows with the
    /// outage (a quarter of it), so a destination back after a short outage is used again
    /// within a second or two, and one down for hours is probed every 30 s.
    package func probeDelay(offlineFor: Double) -> Double {
        min(probeDelayMax, max(probeDelayMin, offlineFor * probeDelayFraction))
    }
}
