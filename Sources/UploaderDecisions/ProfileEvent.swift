import Foundation
import UploaderValues

/// Everything that can happen to a profile, as the one owner hears of it. Watcher, workers,
/// prober, netlink, signals and timers only ever send these; none of them changes state.
package enum ProfileEvent: Sendable, Equatable {
    /// The start-up scan: files to queue, files waiting in retry/ and when each is due,
    /// subdirectories a non-recursive outbox ignores. Nothing is finished before it.
    case recovered(files: [QueuedFile], retries: [RetryEntry], ignoredDirectories: [RelativePath])
    /// Candidate files in the outbox (watcher events, rescans).
    case found([QueuedFile])
    /// Files a rescan found waiting in retry/ (it finished their cut move there), and when each is due.
    case retriesFound([RetryEntry])
    /// Subdirectories of a non-recursive outbox: warned about once each.
    case directoriesIgnored([RelativePath])
    /// A claim job finished.
    case claimed(RelativePath, ClaimReport)
    /// An upload job finished: the attempt was made (or could not be) with this outcome.
    case attempted(RelativePath, AttemptReport)
    /// A settle job rewrote the file's record: it no longer says `uploading` (its moves go on).
    case recordRewritten(RelativePath)
    /// A settle job finished: the file was filed away or put back in the queue.
    case settled(RelativePath, SettleReport)
    /// A file due in retry/ was moved back to the outbox (its new outbox path), or could not be.
    case movedBack(RelativePath, to: QueuedFile?)
    /// A move-back job found the record in retry/ with no file anywhere (the file vanished).
    case recordWithoutFile(RelativePath)
    /// A move-back job failed (a refused write, a name taken), its record still in retry/: it is
    /// tried again a few seconds later (`unwritableRetry`).
    case moveBackFailed(RelativePath)
    /// A `quarantine` job ended: the record moved aside (under this name), or could not be.
    case quarantined(RelativePath, QuarantineReport)
    /// A pass over sent/ (`sweepSent`) ended.
    case sentSwept
    /// A periodic rescan (`rescan`) ended; the files it found were sent before this.
    case rescanned
    /// A reachability probe finished: nil when the destination answered, else why not.
    case probed(ProbeTicket, problem: String?)
    /// The kernel reported a link, address or route change.
    case networkChanged
    /// A route lookup (`interfaces`) finished: the interface the route to the destination leaves by.
    case routeChecked(RouteReport)
    /// SIGHUP, or a credentials file (`token_file`, `password_file`, …) changed: the destination
    /// may take our credentials now.
    case credentialsChanged
    /// Time passed: timers due by now fire.
    case tick
    /// SIGTERM/SIGINT or a reload: stop taking work; uploads in flight get `grace` seconds.
    case stop(grace: TimeInterval)
}

/// A file waiting in retry/ until `due`.
package struct RetryEntry: Sendable, Equatable {
    package var path: RelativePath
    package var due: Date

    package init(path: RelativePath, due: Date) {
        self.path = path
        self.due = due
    }
}

/// What a claim found.
package enum ClaimReport: Sendable, Equatable {
    /// Opened, checked and hashed: ready to upload.
    case ready
    /// Gone before it could be opened.
    case vanished
    /// Not something we upload (symlink, FIFO, name too long…), with the reason.
    case refused(String)
    /// Not claimed now, with the reason (a step the disk refused, a file that would not hold
    /// still): it stays queued and is claimed again `unwritableRetry` later.
    case refusedForNow(String)
    /// Exists but cannot be read: goes to retry/ as failed.
    case unreadable(String)
    /// Its manifest already recorded a final state; the move was finished. A file that now waits
    /// in retry/ comes with when it is due, so it is scheduled like any other.
    /// `anotherFileUnderName`: the name now holds a new file, which is claimed in its turn.
    case finishedByRecovery(retry: RetryEntry?, anotherFileUnderName: Bool = false)
    /// Stopped by our own shutdown (e.g. while hashing a large file).
    case cancelled
}

/// How one upload job ended, in the terms the core decides on.
package enum AttemptOutcome: Sendable, Equatable {
    /// 2xx.
    case delivered(status: Int)
    /// 408, 429, 5xx, a reset or a stall: try again later (the server's Retry-After, if any).
    case retryable(reason: String, retryAfter: TimeInterval?)
    /// Any other answer, TLS or local errors.
    case permanent(reason: String)
    /// The destination could not be reached at all: no attempt.
    case unreachable(reason: String)
    /// The destination refused our credentials (401, 403, an S3 code saying so): the attempt is
    /// kept, not counted, and the file stays queued.
    case rejected(reason: String)
    /// The server's SSH host key is not the one pinned: the attempt is kept, not counted, the file
    /// stays queued and the profile pauses at once (`host_key`).
    case hostKeyMismatch(reason: String)
    /// Cut short by our own cancellation; `connected` says whether the request reached the server.
    case interrupted(connected: Bool)
    /// No request could even be built (e.g. JSON body over 16 MiB): permanent, no attempt.
    case notAttempted(reason: String)
    /// The manifest recording the attempt could not be written (disk full): nothing was sent.
    case manifestUnwritable(reason: String)
    /// The name no longer leads to the file claimed (renamed, deleted, replaced while it waited
    /// for a slot): nothing was written or sent; the name is claimed afresh.
    case claimOutdated

    /// Whether the job wrote the attempt into the record (it says `uploading` until the settle).
    package var wroteRecord: Bool {
        switch self {
        case .manifestUnwritable, .claimOutdated: false
        case .delivered, .retryable, .permanent, .unreachable, .rejected, .hostKeyMismatch, .interrupted, .notAttempted: true
        }
    }
}

/// An upload job's report: the outcome and the facts the decision needs.
package struct AttemptReport: Sendable, Equatable {
    package var outcome: AttemptOutcome
    /// Nil when the file is as it was claimed; otherwise what changed during the upload.
    package var changed: String?
    /// Counted attempts in the manifest, this one included.
    package var countedAttempts: Int
    package var size: Int64
    package var bytesSent: Int64
    package var seconds: Double
    package var httpStatus: Int?
    package var id: String
    /// The job is filing the file in sent/ itself, as its plan ordered for a file delivered
    /// unchanged (`OnDelivered.fileInSent`), and its record says so already (the report leaves
    /// once the record is in place): a `.settled` follows. False otherwise: the core then decides
    /// and asks for a `.settle`.
    package var filing: Bool

    package init(outcome: AttemptOutcome, changed: String? = nil, countedAttempts: Int, size: Int64 = 0,
                 bytesSent: Int64 = 0, seconds: Double = 0, httpStatus: Int? = nil, id: String = "",
                 filing: Bool = false) {
        self.filing = filing
        self.outcome = outcome
        self.changed = changed
        self.countedAttempts = countedAttempts
        self.size = size
        self.bytesSent = bytesSent
        self.seconds = seconds
        self.httpStatus = httpStatus
        self.id = id
    }
}

/// What a `quarantine` job did with a record in retry/ that has no file.
package enum QuarantineReport: Sendable, Equatable {
    /// Moved aside to `.quarantine/`, under this name.
    case movedAside(String)
    /// Could not be moved aside, for this reason; it stays in retry/.
    case failed(String)
}

/// What a settle job did.
package enum SettleReport: Sendable, Equatable {
    /// Filed away into sent/ or retry/ under this path; `retryDue` when it waits in retry/.
    case filed(SpoolArea, RelativePath, retryDue: Date?)
    /// Back in the outbox as queued.
    case requeued
    /// The move found the file changed after its upload (`change`): the file is back in the
    /// outbox, still held, its record the final one; the core decides what becomes of it. When a
    /// new file had taken its name, the changed one came back beside it (`beside`, no record).
    case changedDuringMove(String, beside: QueuedFile? = nil)
    /// The move failed (logged by the job); the file stays in the outbox.
    case failed
}

/// Names one probe, so an answer can be matched with the outage it was asked about.
package struct ProbeTicket: Sendable, Equatable, Hashable {
    package var number: Int
    /// The outage count when the probe was sent: an "all good" from before the latest
    /// outage began says nothing about it.
    package var outage: Int

    package init(number: Int, outage: Int) {
        self.number = number
        self.outage = outage
    }
}
