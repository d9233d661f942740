import CSysShims

/// A signalfd(2) for signals the process keeps blocked (`Signal.block`): they are read from it,
/// one at a time, by the service loop that polls it, instead of interrupting a thread in a
/// handler. Close-on-exec and non-blocking; closed with the value.
///
/// A class, not a `~Copyable` value like the descriptor it holds: the loop's watcher, a closure
/// called on every poll that says it is readable, keeps it for as long as it watches.
package final class SignalDescriptor: Sendable {
    private let descriptor: FileDescriptor

    /// signalfd(2) for `signals` (which the caller keeps blocked); what fails is thrown.
    package init(for signals: [Signal]) throws(Errno) {
        var set = Signal.set(signals)
        let fd = uploader_signalfd(&set)
        guard fd >= 0 else { throw Errno.current }
        descriptor = FileDescriptor(adopting: fd)
    }

    /// The descriptor's number, lent to a poll.
    package var rawValue: Int32 { descriptor.rawValue }

    /// The next signal waiting, EINTR retried; nil when none is (`.wouldBlock`). Any other
    /// failure (a short read included) is thrown.
    package func next() throws(Errno) -> Signal? {
        while true {
            Errno.current = Errno(rawValue: 0)
            let number = uploader_signalfd_read(descriptor.rawValue)
            if number > 0 { return Signal(rawValue: number) }
            let code = Errno.current
            if code == .interrupted { continue }
            if code == .wouldBlock { return nil }
            // The shim fails a short read without an errno of its own.
            throw code.rawValue == 0 ? .io : code
        }
    }
}
