import Foundation

/// The files a profile's workers may take, each at most once at a time.
///
/// Paths are deduplicated: a path already waiting is not added twice, and a path seen again
/// while a worker holds it is re-checked once that worker is done (the file may have changed
/// or been replaced). `take` blocks while the queue is empty or paused (destination offline).
package final class WorkQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var waiting: [RelativePath] = []
    private var head = 0
    private var queued: Set<RelativePath> = []
    private var inFlight: Set<RelativePath> = []
    private var seenAgain: Set<RelativePath> = []
    private var paused = false
    private var closed = false

    package init() {}

    /// Adds a path unless it is already waiting; if a worker holds it, it is re-checked later.
    package func add(_ path: RelativePath, front: Bool = false) {
        condition.lock(); defer { condition.unlock() }
        guard !closed else { return }
        if inFlight.contains(path) { seenAgain.insert(path); return }
        guard queued.insert(path).inserted else { return }
        if front {
            compact()
            waiting.insert(path, at: head)
        } else {
            waiting.append(path)
        }
        condition.signal()
    }

    package func add(contentsOf paths: [RelativePath]) {
        for path in paths { add(path) }
    }

    /// Blocks until a path is available (and the queue is not paused); nil once closed.
    package func take() -> RelativePath? {
        condition.lock(); defer { condition.unlock() }
        while !closed && (paused || head >= waiting.count) { condition.wait() }
        if closed { return nil }
        let path = waiting[head]
        head += 1
        if head > 1024 && head * 2 > waiting.count { compact() }
        queued.remove(path)
        inFlight.insert(path)
        return path
    }

    /// Marks a taken path as done; returns true when it was seen again meanwhile and was re-added.
    @discardableResult
    package func done(_ path: RelativePath) -> Bool {
        condition.lock()
        inFlight.remove(path)
        let again = seenAgain.remove(path) != nil
        condition.broadcast()
        condition.unlock()
        if again { add(path) }
        return again
    }

    /// Stops handing out work (destination offline) or resumes.
    package func setPaused(_ value: Bool) {
        condition.lock(); paused = value; condition.broadcast(); condition.unlock()
    }

    package var isPaused: Bool {
        condition.lock(); defer { condition.unlock() }
        return paused
    }

    /// Wakes every `take` with nil; nothing is handed out after this.
    package func close() {
        condition.lock(); closed = true; condition.broadcast(); condition.unlock()
    }

    package var counts: (waiting: Int, inFlight: Int) {
        condition.lock(); defer { condition.unlock() }
        return (waiting.count - head, inFlight.count)
    }

    /// True when nothing waits and nothing is in flight.
    package var isIdle: Bool {
        condition.lock(); defer { condition.unlock() }
        return head >= waiting.count && inFlight.isEmpty
    }

    /// Blocks until idle or `deadline`; returns whether it became idle.
    package func waitUntilIdle(deadline: Date) -> Bool {
        condition.lock(); defer { condition.unlock() }
        while !(head >= waiting.count && inFlight.isEmpty) {
            if !condition.wait(until: deadline) { return head >= waiting.count && inFlight.isEmpty }
        }
        return true
    }

    private func compact() {
        if head > 0 {
            waiting.removeFirst(head)
            head = 0
        }
    }
}
