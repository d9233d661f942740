import Foundation
import UploaderValues

/// Everything one profile's owner knows, as a value: the queue, the files at each step, the
/// retry schedule, reachability and the pause it implies, the stop in progress, the totals.
/// Only `ProfileCore.step` changes it.
package struct ProfileState: Sendable, Equatable {
    /// Taking work, stopping (uploads in flight may finish until `deadline`), or stopped.
    package enum Phase: Sendable, Equatable {
        case running
        case stopping(deadline: Double)
        case stopped
    }

    /// Whether the destination is believed reachable. Paused is not a separate flag:
    /// uploads start exactly when this says online, so the two can never disagree.
    package enum Reachability: Sendable, Equatable {
        case online
        /// Offline since `since` (monotonic) for `reason`; the next probe is due at `nextProbe`.
        case offline(since: Double, reason: String, nextProbe: Double)

        package var isOnline: Bool { if case .online = self { return true } else { return false } }
    }

    package var phase: Phase = .running
    /// `run --once` met an unreachable destination: nothing new starts, the rest stays queued.
    package var closed = false
    package var reachability: Reachability = .online
    /// Outages so far; probes carry the count they were sent under.
    package var outages = 0
    package var probesSent = 0
    /// The probe in flight, if any, and whether another is wanted as soon as it returns
    /// (the network changed while it ran).
    package var probing: ProbeTicket?
    package var probeAgain = false
    package var lastProblem: String?
    /// `upload_window`: open or not, and until when (wall clock); nil until first looked at, or
    /// when the profile has no windows (always open).
    package var window: WindowPhase?
    /// `interfaces`: what the last route lookup said; nil before the first answer.
    package var route: RouteVerdict?
    /// A route lookup is running, and another is wanted when it returns (the network changed meanwhile).
    package var routeChecking = false
    package var routeCheckAgain = false
    /// Whether the destination takes our credentials (see `Transition+Credentials.swift`).
    package var credentials: Credentials = .accepted
    /// The pause in `credentials` is for the server's SSH host key, not our credentials: shown as
    /// `host_key`, tried again and ended as a refusal of our credentials would be.
    package var hostKeyRefused = false

    /// Every outbox file the owner knows, each at its one stage (waiting, claimed, sending,
    /// settling, refused for our credentials, …), with the indexes read off it.
    package var files = FileStages()
    /// Every file in retry/ the owner knows: waiting there until due, or moving back.
    package var retries = RetryFiles()
    /// `run --once`: retries due at start are the only ones it takes.
    package var onceCutoff: Date?

    /// Names refused for good and names already warned about, once per start: tallies, not stages
    /// (a refused name found again is claimed again, and refused again without a second warning).
    package var refused: Set<RelativePath> = []
    /// Files found under a name whose file is in retry/ or moving back from it: claimed once that
    /// move back has ended (a claim beside it could take the record it links into the outbox for
    /// a move cut short, and remove it).
    package var foundWhileMovingBack: [RelativePath: QueuedFile] = [:]
    package var warned: Set<RelativePath> = []
    package var totals = RunTotals()
    /// The start-up scan has been taken in (`run --once` cannot be drained before).
    package var recovered = false
    package var drainedReported = false
    /// The shutdown grace ran out and the uploads left were aborted.
    package var graceOver = false
    package var random: SplitMix64
    /// Passes over sent/ and periodic rescans: when each is due, and whether one runs.
    package var chores = Chores()

    /// `seed` starts the generator backoff jitter is drawn from: the runner draws it, the core never does.
    package init(seed: UInt64, onceCutoff: Date? = nil) {
        random = SplitMix64(seed: seed)
        self.onceCutoff = onceCutoff
    }

    /// Why nothing starts now, if something stops it: offline first, then the route, then refused
    /// credentials, then the window.
    package var pausedReason: PauseReason? {
        if !reachability.isOnline { return .offline }
        if case .elsewhere = route { return .interface }
        if credentials.isRejected { return hostKeyRefused ? .hostKey : .rejected }
        if window?.open == false { return .outsideWindow }
        return nil
    }

    /// Files the owner holds at some step (claimed, sending, settling, waiting for credentials).
    package func holds(_ path: RelativePath) -> Bool { files.stage(of: path)?.isHeld ?? false }

    /// Nothing waits in line, runs or moves back for this run (delayed files and files refused for
    /// our credentials do not count).
    package var isIdle: Bool {
        files.waiting.isEmpty && files.claimsAhead.isEmpty && files.ready.isEmpty && files.slots.isEmpty
            && files.settling == 0 && retries.movingBack == 0
    }
}

/// Whether `upload_window` lets uploads start, and the next moment (wall clock) that may change.
package struct WindowPhase: Sendable, Equatable {
    package var open: Bool
    package var until: Date?
    /// When it was looked at (wall clock): a wall clock set back before it looks again.
    package var since: Date
}

/// Where the route to the destination leaves, as far as `interfaces` is concerned.
package enum RouteVerdict: Sendable, Equatable {
    /// By an allowed interface (named), or the lookup could not tell (nil: uploads find out).
    case allowed(String?)
    /// By this interface, which is not in the list: paused.
    case elsewhere(String)
}

/// What one process run did for a profile: for `run --once` exit codes, the closing
/// summary line and the metrics file.
package struct RunTotals: Sendable, Equatable {
    package var sent = 0
    package var retried = 0
    package var failed = 0
    package var bytesSent: Int64 = 0
    /// Upload durations (seconds) of sent files, bucketed for the metrics histogram.
    package var durationBuckets: [Int] = Array(repeating: 0, count: RunTotals.durationBounds.count)
    package var durationCount = 0
    package var durationSum = 0.0
    package var leftQueuedOffline = false

    package static let durationBounds: [Double] = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800]

    package init() {}

    package mutating func recordSent(bytes: Int64, seconds: Double) {
        sent += 1
        bytesSent += bytes
        durationCount += 1
        durationSum += seconds
        for (i, bound) in RunTotals.durationBounds.enumerated() where seconds <= bound { durationBuckets[i] += 1 }
    }

    package static func + (a: RunTotals, b: RunTotals) -> RunTotals {
        var sum = a
        sum.sent += b.sent
        sum.retried += b.retried
        sum.failed += b.failed
        sum.bytesSent += b.bytesSent
        sum.durationBuckets = zip(a.durationBuckets, b.durationBuckets).map(+)
        sum.durationCount += b.durationCount
        sum.durationSum += b.durationSum
        sum.leftQueuedOffline = a.leftQueuedOffline || b.leftQueuedOffline
        return sum
    }
}
