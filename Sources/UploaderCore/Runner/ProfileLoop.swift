import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// The one owner of a profile's state: a serial loop that takes events in order, runs
/// `ProfileCore.step`, publishes a snapshot for status, and hands each effect on.
///
/// Serial, but without a thread of its own: whoever sends an event while no one is stepping
/// steps it there and then, and takes every event that arrived meanwhile too; a sender that
/// finds the loop busy only leaves its event for the one stepping. So a report from a worker
/// costs no wake-up of another thread, and the state still has one owner at a time. Steps never
/// block (blocking work is an effect, handed to the worker pool), so a sender is held only for
/// as long as the decisions take. Its `DeadlineTicker` — the daemon's service loop, or else a timer
/// thread of its own (`DeadlineTimer`, waiting on the injected clock) — sends `.tick` at the next
/// deadline (computed on the injected clock): retries, probes, windows, passes over sent/,
/// rescans, a stop's grace.
package final class ProfileLoop: Sendable {
    /// The events waiting, and the state while no one steps it.
    private struct Inbox: ~Copyable {
        var events: [ProfileEvent] = []
        /// Someone is stepping: new events are theirs to take.
        var stepping = false
        /// The state and what carries out effects: here between runs, with the stepper during one.
        var owned: Owned?
    }

    private struct Owned {
        var state: ProfileState
        var steps: Int
        let perform: @Sendable (ProfileEffect) -> Void
    }

    private let inbox = Mutex(Inbox())
    let policy: ProfilePolicy
    let clock: any Clock
    private let published = Mutex(ProfileSnapshot())
    private let ended = Latch()
    private let scheduler: any Scheduler
    private let timer: any DeadlineTicker

    private let observer: (any ProfileLoopObserver)?

    /// `ticker`: where the deadlines come from (nil: a timer thread of the loop's own, waiting on
    /// `clock` with `scheduler`'s wake-ups). `observer`: sees each step (the simulator's checks).
    package init(policy: ProfilePolicy, clock: any Clock, scheduler: any Scheduler = .system, ticker: (any DeadlineTicker)? = nil,
                 observer: (any ProfileLoopObserver)? = nil) {
        self.policy = policy
        self.clock = clock
        self.scheduler = scheduler
        timer = ticker ?? DeadlineTimer(clock: clock, scheduler: scheduler)
        self.observer = observer
    }

    package func send(_ event: ProfileEvent) {
        let step = inbox.withLock { inbox in
            inbox.events.append(event)
            guard !inbox.stepping, inbox.owned != nil else { return false }
            inbox.stepping = true
            return true
        }
        if step { run() }
    }

    /// Starts the owner from `state`: steps what was sent before, then whatever comes.
    package func start(_ state: ProfileState, name: String, perform: @escaping @Sendable (ProfileEffect) -> Void) {
        timer.start(name: "\(name)-timer") { [self] in send(.tick) }
        let step = inbox.withLock { inbox in
            inbox.owned = Owned(state: state, steps: 0, perform: perform)
            inbox.stepping = true
            return true
        }
        if step { run() }
    }

    /// Steps every event waiting, in order, until none is left; then hands the state back.
    private func run() {
        var (owned, events) = inbox.withLock { inbox in
            defer { inbox.events.removeAll(keepingCapacity: true) }
            return (inbox.owned.take()!, inbox.events)
        }
        while true {
            for event in events {
                observer?.taking(event)
                let effects = ProfileCore.step(&owned.state, event, policy: policy, now: clock.instant)
                owned.steps += 1
                published.withLock { $0 = ProfileSnapshot(owned.state, steps: owned.steps) }
                for effect in effects { owned.perform(effect) }
                observer?.stepped(owned.state)
                if owned.state.phase == .stopped {
                    inbox.withLock { $0.events.removeAll() }
                    timer.stop()
                    ended.open()
                    return
                }
            }
            timer.wake(in: ProfileCore.nextDeadline(owned.state, policy: policy, now: clock.instant))
            let more: [ProfileEvent] = inbox.withLock { inbox in
                if inbox.events.isEmpty {
                    inbox.owned = owned
                    inbox.stepping = false
                    return []
                }
                var taken: [ProfileEvent] = []
                swap(&taken, &inbox.events)
                return taken
            }
            if more.isEmpty { return }
            events = more
        }
    }

    /// What the owner last published.
    package var snapshot: ProfileSnapshot { published.withLock { $0 } }

    /// Blocks until the owner has stopped (after a `.stop` event).
    package func waitUntilEnded() { ended.wait(scheduler: scheduler) }
}

/// A profile's state as other threads may read it: counts for status lines and metrics.
package struct ProfileSnapshot: Sendable, Equatable {
    package var waiting = 0
    package var inFlight = 0
    package var online = true
    package var lastProblem: String?
    /// Why nothing starts now (nil: nothing stops it).
    package var pausedReason: PauseReason?
    /// The destination's last refusal of our credentials, while it is in doubt or rejected.
    package var refusal: String?
    package var refused = 0
    package var totals = RunTotals()
    package var stopping = false
    /// Events taken so far: lets a test wait until the owner has seen what it sent.
    package var steps = 0

    package init() {}

    init(_ state: ProfileState, steps: Int) {
        self.steps = steps
        stopping = state.phase != .running
        waiting = state.files.queued
        inFlight = state.files.inFlight
        online = state.reachability.isOnline
        lastProblem = state.lastProblem
        pausedReason = state.phase == .running ? state.pausedReason : nil
        refusal = state.credentials.lastRefusal
        refused = state.refused.count
        totals = state.totals
    }
}

/// What a test sees of the owner's steps: each event as it is taken in, and the state once its
/// effects are handed on. The simulator checks its invariants there; the daemon has none.
package protocol ProfileLoopObserver: Sendable {
    func taking(_ event: ProfileEvent)
    func stepped(_ state: ProfileState)
}
