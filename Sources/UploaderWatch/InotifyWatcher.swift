@preconcurrency import Glibc
import CInotifyTools
import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig

/// Watches outboxes with libinotifytools from one dedicated thread.
///
/// libinotifytools keeps global state, is not thread-safe and exposes no file descriptor,
/// so exactly one thread owns it (with the `WatchTable` it keeps): registrations are queued
/// to that thread, events are copied out of the library's buffer at once and handed to each
/// outbox's handler. The library's state is the process's: a second watcher in one process (tests
/// make one each) waits in `start` until the first has stopped.
package final class InotifyWatcher: Sendable {
    package typealias Handler = @Sendable (WatchEvent) -> Void

    /// What other threads ask of the watcher thread, and what it answers: all behind one lock.
    private struct Control {
        var commands: [WatchTable.Command] = []
        var stopping = false
        var nextID = 1
        /// Registration changes asked for, and those the watcher thread has applied (for `waitForRegistrations`).
        var requested = 0
        var applied = 0
        /// Threads in `waitForRegistrations`: each latch opens once `applied` reaches its count.
        var waiting: [(target: Int, latch: Latch)] = []
        var startError: String?

        /// `applied` moves to `target`; returns the latches of the waits that are over.
        mutating func apply(upTo target: Int) -> [Latch] {
            applied = target
            let over = waiting.filter { $0.target <= target }.map(\.latch)
            waiting.removeAll { $0.target <= target }
            return over
        }
    }

    /// Held by the watcher thread that has libinotifytools, from its initialisation to its cleanup.
    private static let library = DispatchSemaphore(value: 1)

    private let logger: Logger
    private let control = Mutex(Control())
    private let started = DispatchSemaphore(value: 0)
    private let clock: any Clock

    package init(logger: Logger, clock: any Clock = SystemClock()) {
        self.logger = logger
        self.clock = clock
    }

    /// Starts the watcher thread; throws if inotify cannot be initialised.
    package func start() throws {
        SystemScheduler.system.startThread(named: "inotify") { [self] in self.run() }
        started.wait()
        if let startError = control.withLock({ $0.startError }) { throw WatcherError(message: startError) }
    }

    package struct WatcherError: Error, CustomStringConvertible {
        package let message: String
        package var description: String { message }
    }

    /// Adds an outbox; returns an id for `remove`. Takes effect within a second. `recreate`: an
    /// outbox that vanishes is made again; a directory that is not ours (`false`: where a
    /// credentials file lives) is only watched again once it is back.
    @discardableResult
    package func add(root: String, recursive: Bool, recreate: Bool = true, handler: @escaping Handler) -> Int {
        control.withLock { control in
            let id = control.nextID
            control.nextID += 1
            control.commands.append(.add(WatchTable.Registration(id: id, root: root, recursive: recursive, recreate: recreate,
                                                                 handler: handler)))
            control.requested += 1
            return id
        }
    }

    package func remove(_ id: Int) {
        control.withLock { control in
            control.commands.append(.remove(id))
            control.requested += 1
        }
    }

    /// Blocks until every `add` and `remove` made so far is in effect (a scan made after this
    /// cannot miss a file), or `timeout` passes; true when they are.
    package func waitForRegistrations(timeout: TimeInterval) -> Bool {
        let applied = Latch()
        let inEffect = control.withLock { control -> Bool in
            if control.applied >= control.requested { return true }
            control.waiting.append((control.requested, applied))
            return false
        }
        if inEffect { return true }
        if clock.wait(for: applied, until: clock.monotonic + timeout) { return true }
        control.withLock { $0.waiting.removeAll { $0.latch === applied } }
        return applied.isOpen
    }

    package func stop() {
        control.withLock { $0.stopping = true }
    }

    /// The watcher thread: it alone calls libinotifytools, and its table lives only here.
    private func run() {
        Self.library.wait()
        defer { Self.library.signal() }
        if inotifytools_initialize() == 0 {
            let error = "cannot initialise inotify: \(String(cString: strerror(inotifytools_error())))"
            control.withLock { $0.startError = error }
            started.signal()
            return
        }
        let table = WatchTable(logger: logger, clock: clock)
        // Outboxes registered before start are watched before `start` returns, so a
        // scan made after it cannot miss a file that arrives in between.
        let (initial, initialTarget) = control.withLock { control in
            defer { control.commands.removeAll() }
            return (control.commands, control.requested)
        }
        for command in initial { table.apply(command) }
        for latch in control.withLock({ $0.apply(upTo: initialTarget) }) { latch.open() }
        started.signal()
        while true {
            let (pending, target, stop) = control.withLock { control in
                defer { control.commands.removeAll() }
                return (control.commands, control.requested, control.stopping)
            }
            if stop { break }
            for command in pending { table.apply(command) }
            for latch in control.withLock({ $0.apply(upTo: target) }) { latch.open() }
            table.checkLostRoots()
            table.checkPendingCreates()
            guard let event = inotifytools_next_event(1) else { continue }
            table.handle(event)
        }
        inotifytools_cleanup()
    }
}
