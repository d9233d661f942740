import Foundation

/// Brings files in retry/ back to the outbox when their `next_attempt_at` comes.
///
/// One thread per profile sleeps until the earliest due time (or a new entry); due files
/// are handed to `release`, which moves them back and queues them. While the profile is
/// offline nothing is released (the files would only wait in the outbox instead).
package final class RetryScheduler: @unchecked Sendable {
    private let condition = NSCondition()
    private var entries: [RelativePath: Date] = [:]
    private var stopped = false
    private var held = false
    private let release: @Sendable (RelativePath) -> Void
    private var thread: Thread?

    package init(release: @escaping @Sendable (RelativePath) -> Void) {
        self.release = release
    }

    package func schedule(_ path: RelativePath, at date: Date) {
        condition.lock(); entries[path] = date; condition.broadcast(); condition.unlock()
    }

    package func forget(_ path: RelativePath) {
        condition.lock(); entries[path] = nil; condition.unlock()
    }

    /// Entries due at or before `date`, removed from the schedule (for `run --once`).
    package func takeDue(before date: Date) -> [RelativePath] {
        condition.lock(); defer { condition.unlock() }
        let due = entries.filter { $0.value <= date }.map(\.key).sorted()
        for path in due { entries[path] = nil }
        return due
    }

    /// The earliest due time, for `status` and the state file.
    package var nextDue: Date? {
        condition.lock(); defer { condition.unlock() }
        return entries.values.min()
    }

    /// Holds releases while the destination is offline.
    package func setHeld(_ value: Bool) {
        condition.lock(); held = value; condition.broadcast(); condition.unlock()
    }

    package func start() {
        let thread = Thread { [self] in self.run() }
        thread.name = "retry"
        self.thread = thread
        thread.start()
    }

    package func stop() {
        condition.lock(); stopped = true; condition.broadcast(); condition.unlock()
    }

    private func run() {
        condition.lock()
        while !stopped {
            let now = Date()
            if held {
                condition.wait()
                continue
            }
            let due = entries.filter { $0.value <= now }.map(\.key).sorted()
            if due.isEmpty {
                if let next = entries.values.min() {
                    _ = condition.wait(until: next)
                } else {
                    condition.wait()
                }
                continue
            }
            for path in due { entries[path] = nil }
            condition.unlock()
            for path in due { release(path) }
            condition.lock()
        }
        condition.unlock()
    }
}

extension RetryScheduler {
    /// Runs `action` once after `delay` seconds (a file whose manifest could not be written).
    package func scheduleRequeue(_ path: RelativePath, after delay: TimeInterval, _ action: @escaping @Sendable () -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .now() + delay, execute: action)
    }
}
