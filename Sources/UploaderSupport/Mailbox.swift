import Foundation
import Synchronization

/// A queue of messages for one consumer thread: any thread may `send`, one thread takes them
/// in order, waiting until a message arrives or a deadline passes.
///
/// This is how signals and drained profiles reach the daemon's main loop: the senders never
/// touch the consumer's state, so the consumer needs no lock of its own.
///
/// Senders hold the lock only to append; the consumer is woken (its own semaphore) only when
/// it said it would sleep: a condition variable made many senders fight the waking consumer
/// for its mutex.
package final class Mailbox<Message: Sendable>: Sendable {
    private struct Box: ~Copyable {
        var messages: [Message] = []
        var head = 0
        /// The consumer is about to wait, or waits, on `wake`: the next `send` signals it.
        var sleeping = false
    }

    private let box = Mutex(Box())
    private let wake = DispatchSemaphore(value: 0)

    package init() {}

    package func send(_ message: Message) {
        let wakeConsumer = box.withLock { box in
            box.messages.append(message)
            defer { box.sleeping = false }
            return box.sleeping
        }
        if wakeConsumer { wake.signal() }
    }

    /// The next message, waiting at most `timeout` seconds (nil: without limit); nil when none came.
    package func take(timeout: Double?) -> Message? {
        waitForMessages(timeout: timeout)
        return box.withLock { box in
            guard box.head < box.messages.count else { return nil }
            let message = box.messages[box.head]
            box.head += 1
            if box.head == box.messages.count {
                box.messages.removeAll(keepingCapacity: true)
                box.head = 0
            }
            return message
        }
    }

    /// Returns once a message waits or `timeout` seconds have passed (nil: without limit).
    private func waitForMessages(timeout: Double?) {
        let deadline = timeout.map { DispatchTime.now() + $0 }
        while true {
            let empty = box.withLock { box in
                let empty = box.head >= box.messages.count
                box.sleeping = empty
                return empty
            }
            guard empty else { return }
            guard let deadline else {
                wake.wait()
                continue
            }
            if wake.wait(timeout: deadline) == .success { continue }
            // Timed out. A sender that saw us sleeping has signalled, or is about to: take that
            // signal, so the semaphore is at zero for the next wait.
            let signalled = box.withLock { box in
                defer { box.sleeping = false }
                return !box.sleeping
            }
            if signalled { wake.wait() }
            return
        }
    }
}
