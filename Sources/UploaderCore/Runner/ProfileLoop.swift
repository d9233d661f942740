import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// The one owner of a profile's state: a thread that takes events from its mailbox in order,
/// runs `ProfileCore.step`, publishes a snapshot for status, and hands each effect on.
///
/// A thread with a mailbox rather than an actor: the owner must wake at timers measured on
/// an injected clock, and the work it hands out blocks (libcurl, fsync, hashing), which must
/// never run on Swift's cooperative pool; a thread that only decides and never blocks keeps
/// both simple. Every other thread only sends events, so the state needs no lock at all.
package final class ProfileLoop: Sendable {
    private let mailbox = Mailbox<ProfileEvent>()
    let policy: ProfilePolicy
    let clock: any Clock
    private let published = Mutex(ProfileSnapshot())
    private let ended = DispatchSemaphore(value: 0)

    package init(policy: ProfilePolicy, clock: any Clock) {
        self.policy = policy
        self.clock = clock
    }

    package func send(_ event: ProfileEvent) { mailbox.send(event) }

    /// Starts the owner's thread from `state`; `perform` carries out each effect (it must not block).
    package func start(_ state: ProfileState, name: String, perform: @escaping @Sendable (ProfileEffect) -> Void) {
        let thread = Thread { [self] in
            run(state, perform: perform)
            ended.signal()
        }
        thread.name = "\(name)-owner"
        thread.start()
    }

    private func run(_ initial: ProfileState, perform: (ProfileEffect) -> Void) {
        var state = initial
        var steps = 0
        while true {
            let wait = ProfileCore.nextDeadline(state, policy: policy, now: clock.instant)
            // Reports arrive from many workers at once: the owner takes all that wait with one
            // lock and one wake, then steps through them one at a time as ever.
            var events = mailbox.takeAll(timeout: wait)
            if events.isEmpty { events = [.tick] }
            for event in events {
                let effects = ProfileCore.step(&state, event, policy: policy, now: clock.instant)
                steps += 1
                published.withLock { $0 = ProfileSnapshot(state, steps: steps) }
                for effect in effects { perform(effect) }
                if state.phase == .stopped { return }
            }
        }
    }

    /// What the owner last published.
    package var snapshot: ProfileSnapshot { published.withLock { $0 } }

    /// Blocks until the owner's thread has ended (after a `.stop` event).
    package func waitUntilEnded() { ended.wait() }
}

/// A profile's state as other threads may read it: counts for status lines and metrics.
package struct ProfileSnapshot: Sendable, Equatable {
    package var waiting = 0
    package var inFlight = 0
    package var online = true
    package var lastProblem: String?
    /// Why nothing starts now (nil: nothing stops it).
    package var pausedReason: PauseReason?
    package var refused = 0
    package var totals = RunTotals()
    package var stopping = false
    /// Events taken so far: lets a test wait until the owner has seen what it sent.
    package var steps = 0

    package init() {}

    init(_ state: ProfileState, steps: Int) {
        self.steps = steps
        stopping = state.phase != .running
        waiting = state.waiting.count + state.claimsAhead + state.ready.count
        inFlight = state.sending.count + state.settling.count
        online = state.reachability.isOnline
        lastProblem = state.lastProblem
        pausedReason = state.phase == .running ? state.pausedReason : nil
        refused = state.refused.count
        totals = state.totals
    }
}
