import Dispatch
import Synchronization

/// State shared by threads, and the one way to wait for it to change: `wait` blocks until a
/// condition on the state holds, `update` changes the state and wakes exactly the waiters whose
/// conditions now hold. Every hand-off between threads that may block (jobs to workers, moves to
/// the batch leader, directory fsyncs to the callers they cover, messages to a consumer,
/// deadlines to the owner's timer) goes through one of these.
///
/// Invariants:
/// - A condition is only ever run under the monitor's lock, and a waiter is woken only once its
///   condition has held there: it returns the value the condition gave at that moment, without
///   taking the lock again. So a condition may take what it waits for (a job, an answer) out of
///   the state, and what one waiter took no other gets: nothing is lost, nothing is taken twice,
///   and nobody wakes to find nothing (no broadcast, no thundering herd, no fight for the lock).
/// - After each `update` the waiters' conditions are tried in the monitor's `order`: every
///   waiter's (`arrival`), or, for waiters that all wait for the same thing (`lastFirst`: idle
///   workers), until the first that does not hold — none after it could go on either.
/// - Only `update` wakes anyone: a condition that depends on something outside the state is
///   looked at again only when the state is next updated.
/// - A wait with a deadline that passes returns nil and leaves the state as it was, unless its
///   condition held just before it gave up (then it returns that value: what it took is not lost).
/// - Every blocking wait is on a `WakeUp` made by the monitor's `Scheduler`: with the system's,
///   the kernel chooses who runs; with a deterministic one, the scheduler does.
public final class Monitor<State: Sendable>: Sendable {
    /// In which order waiting threads are offered what an update brings.
    public enum Order: Sendable {
        /// Every waiter is offered, the one waiting longest first.
        case arrival
        /// The one that came last first (a worker whose cache is still warm); the offering stops at
        /// the first that refuses, so the waiters must be alike (each waits for the same thing).
        case lastFirst
    }

    @usableFromInline
    struct Waiter {
        /// Runs the waiter's condition; true (its value kept for it) when it held.
        @usableFromInline let offer: @Sendable (inout State) -> Bool
        @usableFromInline let wake: any WakeUp

        @inlinable
        init(offer: @escaping @Sendable (inout State) -> Bool, wake: any WakeUp) {
            self.offer = offer
            self.wake = wake
        }
    }

    @usableFromInline
    struct Inner: ~Copyable {
        @usableFromInline var state: State
        @usableFromInline var waiting: [Waiter] = []

        @inlinable
        init(state: State) { self.state = state }
    }

    @usableFromInline let inner: Mutex<Inner>
    @usableFromInline let order: Order
    @usableFromInline let scheduler: any Scheduler

    @inlinable
    public init(_ state: State, order: Order = .arrival, scheduler: any Scheduler = .system) {
        inner = Mutex(Inner(state: state))
        self.order = order
        self.scheduler = scheduler
    }

    /// Changes the state under the lock, then wakes the waiters whose conditions now hold.
    @discardableResult @inlinable
    public func update<R: Sendable>(_ body: (inout State) -> R) -> R {
        let (result, woken): (R, [any WakeUp]) = inner.withLock { inner in
            let result = body(&inner.state)
            guard !inner.waiting.isEmpty else { return (result, []) }
            return (result, Self.offer(&inner, order: order))
        }
        for wake in woken { wake.signal() }
        return result
    }

    /// Reads the state under the lock (wakes no one).
    @inlinable
    public func read<R: Sendable>(_ body: (borrowing State) -> R) -> R {
        inner.withLock { inner in body(inner.state) }
    }

    /// How many threads wait now (for tests).
    public var waitingCount: Int { inner.withLock { $0.waiting.count } }

    /// Blocks until `condition` gives a value, and returns it. The condition runs at once, and
    /// again after each update while this thread waits; it may change the state (take what it
    /// waits for), and such a change wakes no one else.
    @inlinable
    public func wait<T: Sendable>(for condition: @escaping @Sendable (inout State) -> T?) -> T {
        wait(until: nil, for: condition)!
    }

    /// As `wait(for:)`, but gives up at `deadline` (nil: never) and returns nil then.
    @inlinable
    public func wait<T: Sendable>(until deadline: DispatchTime?, for condition: @escaping @Sendable (inout State) -> T?) -> T? {
        let first: Parked<T> = inner.withLock { inner in
            if let value = condition(&inner.state) { return .ready(value) }
            let slot = Slot<T>()
            let wake = scheduler.makeWakeUp()
            inner.waiting.append(Waiter(offer: { state in
                guard let value = condition(&state) else { return false }
                slot.fill(value)
                return true
            }, wake: wake))
            return .waiting(wake, slot)
        }
        guard case .waiting(let wake, let slot) = first else {
            guard case .ready(let value) = first else { return nil }
            return value
        }
        guard let deadline else {
            wake.wait()
            return slot.value
        }
        if wake.wait(until: deadline) { return slot.value }
        // Gave up; an update may have satisfied it meanwhile (its signal is dropped with the wake-up).
        return inner.withLock { inner in
            if let value = slot.value { return value }
            inner.waiting.removeAll { $0.wake === wake }
            return nil
        }
    }

    /// Offers the state to the waiters in `order` until one's condition does not hold; takes
    /// those whose did out of the line and returns their wake-ups.
    @inlinable
    static func offer(_ inner: inout Inner, order: Order) -> [any WakeUp] {
        var woken: [any WakeUp] = []
        switch order {
        case .arrival:
            inner.waiting.removeAll { waiter in
                guard waiter.offer(&inner.state) else { return false }
                woken.append(waiter.wake)
                return true
            }
        case .lastFirst:
            while let last = inner.waiting.last, last.offer(&inner.state) {
                woken.append(last.wake)
                inner.waiting.removeLast()
            }
        }
        return woken
    }
}

/// A wait's start: its condition held at once, or the thread parks.
@usableFromInline
enum Parked<T: Sendable>: Sendable {
    case ready(T)
    case waiting(any WakeUp, Slot<T>)
}

/// Where a satisfied condition's value waits for its thread.
@usableFromInline
final class Slot<T: Sendable>: Sendable {
    @usableFromInline let stored = Mutex<T?>(nil)

    @inlinable init() {}
    @inlinable func fill(_ value: T) { stored.withLock { $0 = value } }
    @inlinable var value: T? { stored.withLock { $0 } }
}
