@preconcurrency import Glibc
import Foundation

/// A datagram socket standing in for systemd's `$NOTIFY_SOCKET`: it collects every message
/// the daemon sends (READY=1, STATUS=…, STOPPING=1, WATCHDOG=1). A path starting with `@`
/// is an abstract address, as systemd writes it.
final class NotifySocket: @unchecked Sendable {
    let path: String
    private let fd: Int32
    private let lock = NSLock()
    private var received: [String] = []

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("NotifySocket: socket: \(String(cString: strerror(errno)))") }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 } else { unlink(path) }
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { throw HarnessError("NotifySocket: path too long: \(path)") }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(abstract ? MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count : MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw HarnessError("NotifySocket: bind \(path): \(String(cString: strerror(errno)))") }
    }

    deinit {
        close(fd)
        if !path.hasPrefix("@") { unlink(path) }
    }

    /// Every message received so far (reads what is waiting first).
    var messages: [String] {
        lock.lock(); defer { lock.unlock() }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            received.append(String(decoding: buffer[0..<n], as: UTF8.self))
        }
        return received
    }

    /// Every `KEY=value` line of every message, in order.
    var lines: [String] { messages.flatMap { $0.split(separator: "\n").map(String.init) } }
}
