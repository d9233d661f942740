import CSysShims
import Dispatch
import Foundation

/// One waiting thread's wake-up: the thread blocks on `wait`, any thread `signal`s it. Signals
/// are counted, as a semaphore's: each lets one `wait` through, and one that comes first is
/// kept, so the waiter never misses one. Made by a `Scheduler` for one waiting thread and
/// dropped after its wait (a signal left over is dropped with it).
///
/// Every blocking wait of the program — a worker with no job, a caller behind a batch or a
/// directory fsync, a mailbox's consumer, the owner's timer, a wait on a `Clock` — is a wait on
/// one of these, most of them through a `Monitor`; none sleeps or polls on its own. So whoever
/// makes the wake-ups decides how waiting threads run: the system's (`SystemScheduler`) lets
/// the kernel pick, a deterministic one (the simulator's) runs one thread at a time and picks
/// the next itself.
public protocol WakeUp: AnyObject, Sendable {
    /// Blocks until `signal` (at once if it came already).
    func wait()
    /// Blocks until `signal` or `deadline`, whichever comes first; true when signalled.
    func wait(until deadline: DispatchTime) -> Bool
    /// Wakes the waiter (or lets its next `wait` through).
    func signal()
}

/// Starts the threads that wait, and makes the wake-ups they wait on: how the program's threads
/// are scheduled.
public protocol Scheduler: Sendable {
    func makeWakeUp() -> any WakeUp
    /// Starts a thread named `name` running `body`.
    func startThread(named name: String, _ body: @escaping @Sendable () -> Void)
}

/// The kernel's scheduling: a wake-up is a semaphore (a futex wait and wake), a thread a thread,
/// named for the kernel too (`/proc/PID/task/*/comm`, `top -H`, gdb), so each is accounted for.
public struct SystemScheduler: Scheduler {
    public init() {}

    public func makeWakeUp() -> any WakeUp { SemaphoreWakeUp() }

    public func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            uploader_name_thread(name)
            body()
        }
        thread.name = name
        thread.start()
    }
}

extension Scheduler where Self == SystemScheduler {
    public static var system: SystemScheduler { SystemScheduler() }
}

/// A wake-up on a `DispatchSemaphore` of its own.
final class SemaphoreWakeUp: WakeUp {
    private let semaphore = DispatchSemaphore(value: 0)

    func wait() { semaphore.wait() }
    func wait(until deadline: DispatchTime) -> Bool { semaphore.wait(timeout: deadline) == .success }
    func signal() { semaphore.signal() }
}
