import Foundation
import Synchronization

/// Work items that arrive at about the same time are carried out together, as one batch, by
/// one of the callers: what lets moves that finish together share each directory fsync
/// (`FileLifecycle.moveTogether`) instead of taking three each.
///
/// The first caller leads: it takes every item waiting (its own included) and runs the batch.
/// Items that arrive meanwhile wait; when the batch is done the leader wakes their callers with
/// their answers, hands the next batch to the first of the new ones, and returns with its own
/// answer. An item alone is a batch of one, with no wait and no other thread involved.
package final class Batcher<Item: Sendable, Answer: Sendable>: Sendable {
    private final class Ticket: Sendable {
        let item: Item
        let wake = DispatchSemaphore(value: 0)
        /// Set before `wake` is signalled.
        let outcome = Mutex<Outcome?>(nil)

        init(_ item: Item) { self.item = item }
    }

    private enum Outcome: Sendable {
        case done(Result<Answer, any Error>)
        /// Lead the next batch (this ticket is in it).
        case lead
    }

    private struct Queue: ~Copyable {
        var waiting: [Ticket] = []
        var leading = false
    }

    private let queue = Mutex(Queue())

    package init() {}

    /// Runs `item` in a batch, through `perform` (the same for every caller: it carries out a
    /// batch and answers for each item, in order); returns what `perform` answered for this one.
    package func run(_ item: Item, perform: ([Item]) -> [Result<Answer, any Error>]) throws -> Answer {
        let ticket = Ticket(item)
        let leads = queue.withLock { queue in
            queue.waiting.append(ticket)
            if queue.leading { return false }
            queue.leading = true
            return true
        }
        if !leads {
            ticket.wake.wait()
            if case .done(let result) = ticket.outcome.withLock({ $0 }) { return try result.get() }
        }
        let batch = queue.withLock { queue in
            defer { queue.waiting = [] }
            return queue.waiting
        }
        let results = perform(batch.map(\.item))
        let next: Ticket? = queue.withLock { queue in
            if let first = queue.waiting.first { return first }
            queue.leading = false
            return nil
        }
        precondition(results.count == batch.count, "a batch answers for each of its items")
        var mine: Result<Answer, any Error>?
        for (other, result) in zip(batch, results) {
            if other === ticket {
                mine = result
                continue
            }
            other.outcome.withLock { $0 = .done(result) }
            other.wake.signal()
        }
        if let next {
            next.outcome.withLock { $0 = .lead }
            next.wake.signal()
        }
        return try mine!.get()
    }
}

