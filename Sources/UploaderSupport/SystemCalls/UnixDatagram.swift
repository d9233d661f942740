@preconcurrency import Glibc

/// Where an AF_UNIX datagram goes: a path, or an abstract name (its first byte NUL), as the bytes
/// of `sun_path`. What `$NOTIFY_SOCKET` names for systemd's notify protocol.
package struct UnixSocketAddress: Hashable, Sendable {
    /// The bytes of `sun_path`, without a terminating NUL.
    package let bytes: [UInt8]

    /// Nil when `bytes` is empty or does not fit `sun_path` with a byte to spare.
    package init?(_ bytes: [UInt8]) {
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else { return nil }
        self.bytes = bytes
    }

    /// An abstract name lives in no file system and is exactly as long as given.
    package var isAbstract: Bool { bytes[0] == 0 }
}

/// One datagram sent on an AF_UNIX socket of its own, made for it and closed after it: systemd's
/// notify protocol (READY=1, STATUS=…, WATCHDOG=1) with no libsystemd.
package enum UnixDatagram {
    /// socket(2) (SOCK_DGRAM, close-on-exec), sendto(2) of `message` to `address` with
    /// MSG_NOSIGNAL, EINTR retried: the number of bytes sent. What fails is thrown.
    package static func send(_ message: [UInt8], to address: UnixSocketAddress) throws(Errno) -> Int {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Errno.current }
        let descriptor = FileDescriptor(adopting: fd)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (index, byte) in address.bytes.enumerated() { raw[index] = byte }
        }
        // Abstract addresses are exactly as long as given; paths carry their NUL.
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        let length = socklen_t(pathOffset + address.bytes.count + (address.isAbstract ? 0 : 1))
        while true {
            let sent = message.withUnsafeBytes { body in
                withUnsafePointer(to: &addr) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(descriptor.rawValue, body.baseAddress, body.count, Int32(MSG_NOSIGNAL), $0, length)
                    }
                }
            }
            if sent >= 0 { return sent }
            let code = Errno.current
            if code != .interrupted { throw code }
        }
    }
}
