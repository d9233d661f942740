import Foundation
import UploaderValues

/// What the owner asks to be done after a transition. The runner performs each one (file
/// system, network, processes, log) and reports back with a `ProfileEvent`.
package enum ProfileEffect: Sendable, Equatable {
    /// Open, check and hash a file of the outbox, pairing it with its manifest; write the record
    /// of its next attempt aside (fsynced, not in place), so its upload only has to rename it.
    case claim(RelativePath)
    /// A transfer slot is taken: record the attempt in the manifest (the record the claim wrote
    /// aside, or a fresh one, as the plan says), then send the file; what becomes of a delivery
    /// is in the plan too.
    case upload(RelativePath, UploadPlan)
    /// A transfer slot is taken for a file not claimed yet (no claims ahead): one job claims it
    /// (reporting `claimed`), then goes on as `upload` when it is ready. A file costs one job.
    case claimAndUpload(RelativePath, UploadPlan)
    /// Write the file's next manifest and move it as `Settlement` says.
    case settle(RelativePath, Settlement)
    /// Let go of a claimed file that will not be sent now (shutdown); it stays queued on disk.
    case release(RelativePath)
    /// Abort these uploads (offline, shutdown grace over).
    case cancelUploads([RelativePath])
    /// Abort these claims (shutdown while hashing).
    case cancelClaims([RelativePath])
    /// Move a due file from retry/ back to the outbox.
    case moveBack(RelativePath)
    /// Move a record in retry/ that has no file aside to `.quarantine/` (never deleted), so it
    /// neither waits for ever nor counts in `status`; report `quarantined`.
    case quarantine(RelativePath)
    /// Pass over sent/ for `keep_sent` and `keep_sent_bytes` (a job); report `sentSwept`.
    case sweepSent
    /// Rescan the outbox (a job), sending what it finds as `found` and `retriesFound`; report `rescanned`.
    case rescan
    /// Try to reach the destination.
    case probe(ProbeTicket)
    /// Ask the kernel which interface the route to the destination leaves by (`interfaces`).
    case checkRoute
    /// One log line.
    case log(LogLine)
    /// `run --once`: nothing is left to do.
    case drained
    /// The stop is complete: nothing is held any more.
    case stopped
}

/// How an upload job goes about its file, decided by the core as the slot is taken.
package struct UploadPlan: Sendable, Equatable {
    /// Which record of the attempt the job puts in place.
    package var record: AttemptRecord
    /// What the job does with the file once it is delivered unchanged.
    package var onDelivered: OnDelivered
}

/// The record of an upload's attempt, as the core chooses it.
package enum AttemptRecord: Sendable, Equatable {
    /// The one the claim wrote aside, fresh enough to stand for the attempt's start: renamed into place.
    case prepared
    /// One written now; one the claim wrote aside (stale) is discarded.
    case fresh
}

/// What an upload job does with a file delivered unchanged, ordered with the upload.
package enum OnDelivered: Sendable, Equatable {
    /// File it in sent/ in the same job (`Settlement.sent` at the time of delivery), so the file
    /// costs no settle job: `attempted` (with `filing`) as soon as its record says sent, then `settled`.
    case fileInSent
}

/// What becomes of a file after its upload job, decided by the core and carried out by the
/// runner (see `Manifest.settle` for the manifest edit of each).
package enum Settlement: Sendable, Equatable {
    /// Delivered: to sent/.
    case sent(at: Date)
    /// A retryable failure: to retry/ until `due`.
    case retry(reason: String, due: Date)
    /// Permanent, or out of attempts: to retry/ as failed; `retryable` records the attempt's own nature.
    case failed(reason: String, retryable: Bool)
    /// Failed before any request (unreadable file, request not buildable): to retry/ as failed, no attempt.
    case failedWithoutAttempt(reason: String)
    /// The file changed during the upload: stays queued, uploaded again from its new content.
    case changed(String)
    /// The destination could not be reached: stays queued, the attempt is dropped.
    case unreachable(reason: String)
    /// The destination refused our credentials: stays queued; the attempt is kept, marked rejected
    /// (not counted toward `max_attempts`).
    case rejected(reason: String)
    /// Cut by our own cancellation: stays queued; the attempt is kept as interrupted only if the request got out.
    case interrupted(connected: Bool)
}

/// A log line decided by the core.
package struct LogLine: Sendable, Equatable {
    package var level: LogLevel
    package var message: String
    package var metadata: [Pair]

    package struct Pair: Sendable, Equatable {
        package var key: String
        package var value: String
    }

    package init(_ level: LogLevel, _ message: String, _ metadata: KeyValuePairs<String, String> = [:]) {
        self.level = level
        self.message = message
        self.metadata = metadata.map { Pair(key: $0.key, value: $0.value) }
    }
}
