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
///
/// Public and inlinable, as `Monitor` is: every move of every file crosses it, and only so does
/// the compiler specialize it for the spool's items instead of running it through witness tables.
public final class Batcher<Item: Sendable, Answer: Sendable>: Sendable {
    @usableFromInline
    enum Outcome: Sendable {
        case done(Result<Answer, any Error>)
        /// Lead the next batch (this caller's item is in it).
        case lead
    }

    /// The items waiting, by ticket in arrival order, and what each waiting caller is told.
    @usableFromInline
    struct Queue: Sendable {
        @usableFromInline var waiting: [(ticket: Int, item: Item)] = []
        @usableFromInline var outcomes: [Int: Outcome] = [:]
        @usableFromInline var issued = 0
        @usableFromInline var leading = false

        @inlinable init() {}
    }

    @usableFromInline let queue: Monitor<Queue>

    @inlinable
    public init(scheduler: any Scheduler = .system) { queue = Monitor(Queue(), scheduler: scheduler) }

    /// Runs `item` in a batch, through `perform` (the same for every caller: it carries out a
    /// batch and answers for each item, in order); returns what `perform` answered for this one.
    @inlinable
    public func run(_ item: Item, perform: ([Item]) -> [Result<Answer, any Error>]) throws -> Answer {
        // Lead at once when nobody does; else wait with a ticket.
        let ticket: Int? = queue.update { queue in
            guard queue.leading else {
                queue.leading = true
                return nil
            }
            queue.issued += 1
            queue.waiting.append((queue.issued, item))
            return queue.issued
        }
        guard let ticket else { return try lead(own: item, perform: perform) }
        // Tickets are answered in the order they were issued: the monitor's order.
        switch queue.wait(for: { $0.outcomes.removeValue(forKey: ticket) }) {
        case .done(let result): return try result.get()
        case .lead: return try lead(own: nil, ticket: ticket, perform: perform)
        }
    }

    /// Runs one batch: `own`, the item of a caller that led at once, or that of `ticket` (handed
    /// the lead, its item still in the queue), with every item waiting; answers the others, hands
    /// the lead on, and returns the leader's own answer.
    @inlinable
    func lead(own: Item?, ticket: Int? = nil, perform: ([Item]) -> [Result<Answer, any Error>]) throws -> Answer {
        let batch = queue.update { queue in
            defer { queue.waiting = [] }
            return queue.waiting
        }
        var items: [Item] = []
        items.reserveCapacity(batch.count + 1)
        if let own { items.append(own) }
        for other in batch { items.append(other.item) }
        let results = perform(items)
        precondition(results.count == items.count, "a batch answers for each of its items")
        var mine = own == nil ? nil : results[0]
        queue.update { queue in
            for (index, other) in batch.enumerated() {
                let result = results[index + (own == nil ? 0 : 1)]
                if other.ticket == ticket {
                    mine = result
                } else {
                    queue.outcomes[other.ticket] = .done(result)
                }
            }
            // The first of those who came meanwhile leads the next batch.
            if let next = queue.waiting.first {
                queue.outcomes[next.ticket] = .lead
            } else {
                queue.leading = false
            }
        }
        return try mine!.get()
    }
}
