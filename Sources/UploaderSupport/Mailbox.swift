import Dispatch

/// A queue of messages for one consumer thread: any thread may `send`, one thread takes them
/// in order, waiting until a message arrives or a deadline passes.
///
/// This is how signals and drained profiles reach the daemon's main loop: the senders never
/// touch the consumer's state, so the consumer needs no lock of its own. A `Monitor`: a sender
/// holds its lock only to append, and wakes the consumer only when it waits.
package final class Mailbox<Message: Sendable>: Sendable {
    private let box: Monitor<FirstInLine<Message>>

    package init(scheduler: any Scheduler = .system) { box = Monitor(FirstInLine(), scheduler: scheduler) }

    package func send(_ message: Message) {
        box.update { $0.append(message) }
    }

    /// The next message, waiting at most `timeout` seconds (nil: without limit); nil when none came.
    package func take(timeout: Double?) -> Message? {
        box.wait(until: timeout.map { DispatchTime.now() + $0 }) { $0.takeFirst() }
    }
}
