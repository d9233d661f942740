import Foundation
import Synchronization

/// Work items that arrive at about the same time are carried out together, as one batch, by
/// one of the callers: what lets moves that finish together share each directory fsync
/// (`FileLifecycle.moveTogether`) instead of taking three each.
///
/// The first caller leads: it takes every item waiting (its own included) and runs the batch.
/// Items that arrive meanwhile wait; when the batch is done the leader wakes their callers with
/// their answers, hands the next batch to the first of the new ones, and returns with its own
/// answer. An item alone is a batch of one, with no wait and no other thread involved — and
/// nothing allocated for waiting: a caller gets a ticket (and its wake-up) only when it must wait.
package final class Batcher<Item: Sendable, Answer: Sendable>: Sendable {
    /// A caller waiting while another leads.
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
        // Lead at once when nobody does; else wait with a ticket of one's own.
        let ticket: Ticket? = queue.withLock { queue in
            guard queue.leading else {
                queue.leading = true
                return nil
            }
            let ticket = Ticket(item)
            queue.waiting.append(ticket)
            return ticket
        }
        guard let ticket else { return try lead(own: item, perform: perform) }
        ticket.wake.wait()
        switch ticket.outcome.withLock({ $0 }) {
        case .done(let result)?: return try result.get()
        case .lead?, nil: return try lead(own: nil, waiting: ticket, perform: perform)
        }
    }

    /// Runs one batch: `own`, the item of a caller that led at once, or `waiting`'s (a ticket
    /// handed the lead, already in the queue), with every ticket waiting; answers the others,
    /// hands the lead on, and returns the leader's own answer.
    private func lead(own: Item?, waiting leader: Ticket? = nil,
                      perform: ([Item]) -> [Result<Answer, any Error>]) throws -> Answer {
        let tickets = queue.withLock { queue in
            defer { queue.waiting = [] }
            return queue.waiting
        }
        var items: [Item] = []
        items.reserveCapacity(tickets.count + 1)
        if let own { items.append(own) }
        for other in tickets { items.append(other.item) }
        let results = perform(items)
        precondition(results.count == items.count, "a batch answers for each of its items")
        let next: Ticket? = queue.withLock { queue in
            if let first = queue.waiting.first { return first }
            queue.leading = false
            return nil
        }
        var mine = own == nil ? nil : results[0]
        for (index, other) in tickets.enumerated() {
            let result = results[index + (own == nil ? 0 : 1)]
            if other === leader {
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
