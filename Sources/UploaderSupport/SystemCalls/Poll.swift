@preconcurrency import Glibc

/// What poll(2) waits for on a descriptor, and what it says came, by name (`.readable`, not
/// `POLLIN`). An error, a hang-up or a closed descriptor come whether asked for or not.
package struct PollEvents: OptionSet, Hashable, Sendable {
    package let rawValue: Int16
    package init(rawValue: Int16) { self.rawValue = rawValue }

    /// POLLIN: there is something to read (or the end of it).
    package static let readable = PollEvents(rawValue: Int16(POLLIN))
    /// POLLOUT: a write would not wait (a non-blocking connect has ended, one way or the other).
    package static let writable = PollEvents(rawValue: Int16(POLLOUT))
    /// POLLERR: the descriptor failed.
    package static let error = PollEvents(rawValue: Int16(POLLERR))
    /// POLLHUP: the other end is gone.
    package static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
    /// POLLNVAL: the number is not an open descriptor.
    package static let invalid = PollEvents(rawValue: Int16(POLLNVAL))
}

/// One descriptor of a `Poll.wait`: its number (lent, not owned: its owner keeps it open across
/// the wait), what is waited for, and after the wait what came.
package struct PollEntry: Sendable {
    /// The descriptor; nil leaves this entry out of the wait (its `returned` stays empty).
    package var descriptor: Int32?
    package var events: PollEvents
    /// What the last wait said came: empty when nothing did.
    package internal(set) var returned: PollEvents = []

    package init(_ descriptor: Int32?, waitingFor events: PollEvents) {
        self.descriptor = descriptor
        self.events = events
    }
}

/// poll(2) over lent descriptors with typed events: the one wait of the service loop, a hook's
/// output reader and the reachability probe's connect, so that none of them needs libc.
package enum Poll {
    /// Waits until an entry's descriptor has one of its events (or an error or a hang-up), or
    /// `milliseconds` have passed (nil: no limit). The number of entries something came on, 0
    /// when the time ran out. EINTR is retried with the time left; any other failure is thrown.
    package static func wait(_ entries: inout [PollEntry], milliseconds: Int32?) throws(Errno) -> Int {
        var fds = entries.map { pollfd(fd: $0.descriptor ?? -1, events: $0.events.rawValue, revents: 0) }
        let deadline = milliseconds.map { KernelClock.monotonicSeconds + Double($0) / 1000 }
        var timeout = milliseconds.map { max(0, $0) } ?? -1
        while true {
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready >= 0 {
                for index in entries.indices { entries[index].returned = PollEvents(rawValue: fds[index].revents) }
                return Int(ready)
            }
            let code = Errno.current
            if code != .interrupted { throw code }
            if let deadline {
                let left = ((deadline - KernelClock.monotonicSeconds) * 1000).rounded(.up)
                timeout = Int32(clamping: Int(max(0, left)))
            }
        }
    }
}
