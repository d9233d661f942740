@preconcurrency import Glibc

/// One TCP connect bounded by a timeout: a non-blocking, close-on-exec socket, connect(2), a
/// poll for writable, then the socket's own error (SO_ERROR). What the reachability probe asks
/// ("can the destination be reached at all?"); the connection is closed as soon as it is made.
package enum TCPConnect {
    /// Where a connect failed, with what the kernel said.
    package enum Failure: Error, Hashable, Sendable {
        /// socket(2) failed.
        case socket(Errno)
        /// The connection was refused or could not be made (connect, the wait for it, or its SO_ERROR).
        case connect(Errno)
        /// Nothing came back within the timeout.
        case timedOut
    }

    /// Connects to `address` and closes again; throws why not. `seconds` bounds the wait for
    /// the connection (whole milliseconds).
    package static func connect(to address: StreamAddress, timeout seconds: Double) throws(Failure) {
        let type = address.socketType | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(address.family, type, address.socketProtocol)
        guard fd >= 0 else { throw .socket(Errno.current) }
        let descriptor = FileDescriptor(adopting: fd)
        let started = address.bytes.withUnsafeBytes { raw in
            Glibc.connect(descriptor.rawValue, raw.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        if started == 0 { return }
        guard Errno.current == .inProgress else { throw .connect(Errno.current) }
        var entries = [PollEntry(descriptor.rawValue, waitingFor: .writable)]
        let ready: Int
        do {
            ready = try Poll.wait(&entries, milliseconds: Int32(seconds * 1000))
        } catch {
            throw .connect(error)
        }
        if ready == 0 { throw .timedOut }
        var outcome: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor.rawValue, SOL_SOCKET, SO_ERROR, &outcome, &length) == 0 else { throw .connect(Errno.current) }
        if outcome != 0 { throw .connect(Errno(rawValue: outcome)) }
    }
}
