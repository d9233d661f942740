import Foundation

/// A queue of messages for one consumer thread: any thread may `send`, one thread takes them
/// in order, waiting until a message arrives or a deadline passes.
///
/// This is how events reach a profile's owner and signals reach the daemon's main loop: the
/// senders never touch the consumer's state, so the consumer needs no lock of its own.
package final class Mailbox<Message: Sendable>: @unchecked Sendable {
    // Guards `messages` and `head`; the condition wakes the consumer.
    private let condition = NSCondition()
    private var messages: [Message] = []
    private var head = 0

    package init() {}

    package func send(_ message: Message) {
        condition.lock()
        messages.append(message)
        condition.unlock()
        // After the unlock: a woken consumer does not at once block on the lock still held here.
        condition.signal()
    }

    /// The next message, waiting at most `timeout` seconds (nil: without limit); nil when none came.
    package func take(timeout: Double?) -> Message? {
        condition.lock()
        defer { condition.unlock() }
        if head >= messages.count, let timeout {
            let deadline = Date().addingTimeInterval(timeout)
            while head >= messages.count {
                if !condition.wait(until: deadline) { break }
            }
        } else {
            while head >= messages.count { condition.wait() }
        }
        guard head < messages.count else { return nil }
        let message = messages[head]
        head += 1
        if head == messages.count {
            messages.removeAll(keepingCapacity: true)
            head = 0
        }
        return message
    }
}
