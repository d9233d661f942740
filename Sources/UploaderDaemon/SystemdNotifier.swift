@preconcurrency import Glibc
import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore

/// systemd's notify protocol (`Type=notify`) over `$NOTIFY_SOCKET` with a plain datagram
/// socket, no libsystemd: READY=1, STATUS=…, STOPPING=1, WATCHDOG=1.
package struct SystemdNotifier: Sendable {
    /// The socket address bytes for `sun_path`; an abstract address (`@name`) starts with NUL.
    private let address: [UInt8]?
    /// How often to send WATCHDOG=1 (half of WATCHDOG_USEC), when systemd asks for it.
    package let watchdogInterval: TimeInterval?

    package init(environment: [String: String]) {
        if let socket = environment["NOTIFY_SOCKET"], socket.hasPrefix("/") || socket.hasPrefix("@"), socket.utf8.count > 1 {
            var bytes = Array(socket.utf8)
            if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }
            address = bytes.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) ? bytes : nil
        } else {
            address = nil
        }
        let pidMatches = environment["WATCHDOG_PID"].map { Int32($0) == getpid() } ?? true
        if let usec = environment["WATCHDOG_USEC"].flatMap(UInt64.init), usec > 0, pidMatches {
            watchdogInterval = Double(usec) / 2e6
        } else {
            watchdogInterval = nil
        }
    }

    package var isEnabled: Bool { address != nil }

    /// Sends one notification (lines `KEY=value`); false when there is no socket or sending failed.
    @discardableResult
    package func send(_ message: String) -> Bool {
        guard let address else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (index, byte) in address.enumerated() { raw[index] = byte }
        }
        // Abstract addresses are exactly as long as given; paths carry their NUL.
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        let length = socklen_t(pathOffset + address.count + (address[0] == 0 ? 0 : 1))
        let bytes = Array(message.utf8)
        let sent = bytes.withUnsafeBytes { body in
            withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, body.baseAddress, body.count, Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
        return sent == bytes.count
    }

    /// One line fit for STATUS=: control characters replaced so it stays one line.
    package static func statusLine(_ text: String) -> String {
        "STATUS=" + String(text.unicodeScalars.map { $0.value < 0x20 ? " " : Character($0) })
    }
}
