import Foundation
import UploaderValues

/// How often the daemon passes over sent/ for `keep_sent` and `keep_sent_bytes`: the core times
/// each pass (`ProfileEffect.sweepSent`) from when the last one ended.
package struct RetentionPacing: Sendable, Equatable {
    /// A pass at least this often.
    package var every: TimeInterval
    /// `keep_sent_bytes`: deliveries of this many bytes since the last pass bring the next one
    /// forward, to `soonest` after it (a pass reads all of sent/); nil without a size bound.
    package var afterDelivered: Int64?
    package var soonest: TimeInterval = 60

    package init(every: TimeInterval, afterDelivered: Int64? = nil) {
        self.every = every
        self.afterDelivered = afterDelivered
    }
}

/// The jobs the core starts on its own time, not for a file: passes over sent/ (retention) and
/// periodic rescans of the outbox. Kept here so their times are the core's, on the clock it is
/// given, and a tick past them is what starts them.
package struct Chores: Sendable, Equatable {
    /// When the last pass over sent/ ended (monotonic); nil before the first, which is due at once.
    package var sweptAt: Double?
    /// A pass over sent/ is under way.
    package var sweeping = false
    /// The bytes this run had delivered when the last pass began (`RetentionPacing.afterDelivered`).
    package var deliveredAtSweep: Int64 = 0
    /// When the next periodic rescan is due (monotonic); nil while one runs or none is planned.
    package var rescanDue: Double?
    /// A periodic rescan is under way.
    package var rescanning = false

    package init() {}
}

extension ProfileState {
    /// When the next pass over sent/ is due (monotonic): at once before the first, `every` after
    /// the last, or `soonest` after it once enough was delivered; nil while one runs, without
    /// retention, or when the core starts none (not a daemon, not running, before the start-up scan).
    package func sweepDue(_ policy: ProfilePolicy) -> Double? {
        guard let pacing = policy.retention, startsChores(policy), !chores.sweeping else { return nil }
        guard let last = chores.sweptAt else { return -.infinity }
        var due = last + pacing.every
        if let bytes = pacing.afterDelivered, totals.bytesSent - chores.deliveredAtSweep >= max(1, bytes) {
            due = min(due, last + pacing.soonest)
        }
        return due
    }

    /// When the next periodic rescan is due (monotonic), if the core would start one.
    package func rescanDue(_ policy: ProfilePolicy) -> Double? {
        startsChores(policy) ? chores.rescanDue : nil
    }

    /// Chores start only in a running daemon that has taken in its start-up scan.
    private func startsChores(_ policy: ProfilePolicy) -> Bool {
        policy.mode == .daemon && phase == .running && recovered
    }
}

extension Transition {
    /// The start-up scan is in: the first rescan is due one interval later.
    mutating func planChores() {
        if policy.mode == .daemon, let every = policy.rescanEvery { state.chores.rescanDue = now.mono + every }
    }

    /// A tick (or any step) at or past a chore's time starts it.
    mutating func fireChores() {
        if let due = state.sweepDue(policy), due <= now.mono {
            state.chores.sweeping = true
            state.chores.deliveredAtSweep = state.totals.bytesSent
            effects.append(.sweepSent)
        }
        if let due = state.rescanDue(policy), due <= now.mono {
            state.chores.rescanDue = nil
            state.chores.rescanning = true
            effects.append(.rescan)
        }
    }

    /// A pass over sent/ ended: the next is timed from now.
    mutating func sentSwept() {
        state.chores.sweeping = false
        state.chores.sweptAt = now.mono
    }

    /// A periodic rescan ended (its files came before this report): the next is due one interval from now.
    mutating func rescanned() {
        state.chores.rescanning = false
        if let every = policy.rescanEvery, policy.mode == .daemon, state.phase == .running { state.chores.rescanDue = now.mono + every }
    }
}
