import Foundation
import UploaderSupport

/// The time a request's body spends on the wire, in the simulated clock, while a stop is under
/// way. Elsewhere a request takes no simulated time; during a stop each body still to be sent
/// takes a drawn while (up to about twice `shutdown_grace`), so only the cancel at the end of
/// the grace makes a stop keep to it, and a stop that waits for its uploads outlasts it
/// (`shutdownWithinGrace`). The job waits on the simulated clock, as production's transfer waits
/// on the network: its cancellation ends the wait at once, the clock reaching the body's end
/// ends it too, and the process's death releases it.
final class SimWire: @unchecked Sendable {
    // Used by the thread holding the baton only.
    private struct Wait {
        var deadline: Double
        var released: Latch
    }

    private var waits: [Int: Wait] = [:]
    private var next = 0
    /// The process is gone: no body waits any more.
    private var closed = false
    /// The simulated clock the bodies' time runs on (set when the process is made).
    var clock: SimClock?
    /// How long a body now on the wire takes, in seconds; nil when it takes no simulated time.
    var duration: () -> Double? = { nil }

    /// The earliest moment (monotonic) a body on the wire is through; nil when none waits.
    var nextDeadline: Double? { waits.values.map(\.deadline).min() }

    /// Carries a body over the wire: returns once it is through, `cancellation` is set (unless
    /// `ignoringCancel`, the planted bug of a transfer deaf to it), or the process is gone.
    func carry(_ cancellation: CancellationFlag, ignoringCancel: Bool) {
        guard !closed, let clock, let seconds = duration(), seconds > 0 else { return }
        let released = Latch()
        let relay = Relay(released)
        if !ignoringCancel, !cancellation.latch.notify(relay) { return }
        defer { cancellation.latch.forget(relay) }
        let id = next
        next += 1
        let deadline = clock.monotonic + seconds
        waits[id] = Wait(deadline: deadline, released: released)
        defer { waits[id] = nil }
        _ = clock.wait(for: released, until: deadline)
    }

    /// The process died or is dropped: every body on the wire stops waiting.
    func releaseAll() {
        closed = true
        for wait in waits.values { wait.released.open() }
    }

    /// Opens `target` when signalled: a request's cancellation, passed on to its wait on the wire.
    private final class Relay: WakeUp, @unchecked Sendable {
        // Signalled once, by the thread holding the baton.
        let target: Latch
        init(_ target: Latch) { self.target = target }
        func wait() {}
        func wait(until deadline: DispatchTime) -> Bool { target.isOpen }
        func signal() { target.open() }
    }
}
