import Synchronization
import UploaderSupport

/// What wakes the service loop from poll(2): a non-blocking pipe, and a flag that keeps it to
/// one unread byte however many wake-ups come before the loop reads. The flag is cleared only
/// after the pipe is emptied: a wake-up that comes while the loop reads then either leaves its
/// byte for the next poll or finds the flag still set, and the loop's next look at its state
/// sees what that wake-up changed. Cleared first, the flag could stay set over an empty pipe,
/// and every later wake-up would write nothing.
package final class WakePipe: Sendable {
    /// Both ends, closed with the pipe.
    private let ends: PipeEnds
    /// A byte is in the pipe and not read yet: one is enough.
    private let woken = Mutex(false)

    package init() {
        do {
            ends = try PipeEnds(nonBlocking: true)
        } catch {
            // A pipe is all a wake-up needs; without one the daemon cannot run at all.
            preconditionFailure("cannot make the service loop's wake pipe: \(error.description)")
        }
    }

    /// The end the loop polls (lent: the pipe keeps it open).
    package var readEnd: Int32 { ends.readEnd.rawValue }

    /// Makes the next poll of `readEnd` return (at once if it is under way).
    package func wake() {
        let write = woken.withLock { woken -> Bool in
            defer { woken = true }
            return !woken
        }
        guard write else { return }
        let byte: UInt8 = 1
        do {
            _ = try withUnsafeBytes(of: byte) { bytes throws(Errno) in try ends.writeEnd.write(bytes) }
        } catch {
            // What the wake-up needs is there whatever this says: a full pipe (`.wouldBlock`) has
            // bytes for the poll to see, and no other failure befalls a pipe whose ends we hold.
        }
    }

    /// Empties the pipe, then lets the next `wake` write again.
    package func drain() {
        drain { buffer throws(Errno) in try ends.readEnd.read(into: buffer) }
    }

    /// `drain` with `read` for read(2) of `readEnd`: tests wake the pipe from inside it, between
    /// two reads. Reading stops at the first read that gets nothing or fails (`.wouldBlock`: empty).
    package func drain(read: (UnsafeMutableRawBufferPointer) throws(Errno) -> Int) {
        var buffer = [UInt8](repeating: 0, count: 64)
        do {
            while try buffer.withUnsafeMutableBytes({ raw throws(Errno) in try read(raw) }) > 0 {}
        } catch {
            // `.wouldBlock`: the pipe is empty, which is what draining is for. No other failure
            // befalls a pipe whose ends we hold; either way nothing more is read now.
        }
        woken.withLock { $0 = false }
    }

    /// Whether a byte waits in the pipe: what the loop's next poll would see.
    package var pending: Bool {
        get throws(Errno) {
            var entries = [PollEntry(readEnd, waitingFor: .readable)]
            return try Poll.wait(&entries, milliseconds: 0) == 1
        }
    }
}
