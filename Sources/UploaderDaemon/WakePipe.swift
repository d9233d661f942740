@preconcurrency import Glibc
import Synchronization
import UploaderSupport

/// What wakes the service loop from poll(2): a non-blocking pipe, and a flag that keeps it to
/// one unread byte however many wake-ups come before the loop reads. The flag is cleared only
/// after the pipe is emptied: a wake-up that comes while the loop reads then either leaves its
/// byte for the next poll or finds the flag still set, and the loop's next look at its state
/// sees what that wake-up changed. Cleared first, the flag could stay set over an empty pipe,
/// and every later wake-up would write nothing.
package final class WakePipe: Sendable {
    /// The end the loop polls.
    package let readEnd: Int32
    private let writeEnd: Int32
    /// A byte is in the pipe and not read yet: one is enough.
    private let woken = Mutex(false)

    package init() {
        var ends: [Int32] = [-1, -1]
        // A pipe is all a wake-up needs; without one the daemon cannot run at all.
        precondition(pipe(&ends) == 0, "cannot make the service loop's wake pipe: \(Errno.current.description)")
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Makes the next poll of `readEnd` return (at once if it is under way).
    package func wake() {
        let write = woken.withLock { woken -> Bool in
            defer { woken = true }
            return !woken
        }
        guard write else { return }
        var byte: UInt8 = 1
        _ = Glibc.write(writeEnd, &byte, 1)
    }

    /// Empties the pipe, then lets the next `wake` write again. `read` is read(2) but in tests,
    /// which wake the pipe from inside it, between two reads.
    package func drain(read: (Int32, UnsafeMutableRawPointer?, Int) -> Int = { Glibc.read($0, $1, $2) }) {
        var buffer = [UInt8](repeating: 0, count: 64)
        while buffer.withUnsafeMutableBytes({ read(readEnd, $0.baseAddress, $0.count) }) > 0 {}
        woken.withLock { $0 = false }
    }

    /// Whether a byte waits in the pipe: what the loop's next poll would see.
    package var pending: Bool {
        var fd = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        return poll(&fd, 1, 0) == 1
    }
}
