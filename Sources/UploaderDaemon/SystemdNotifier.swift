import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore

/// systemd's notify protocol (`Type=notify`) over `$NOTIFY_SOCKET` with a plain datagram
/// socket, no libsystemd: READY=1, STATUS=…, STOPPING=1, WATCHDOG=1.
package struct SystemdNotifier: Sendable {
    /// Where notifications go; an abstract address (`@name`) starts with NUL.
    private let address: UnixSocketAddress?
    /// How often to send WATCHDOG=1 (half of WATCHDOG_USEC), when systemd asks for it.
    package let watchdogInterval: Double?

    package init(environment: [String: String]) {
        if let socket = environment["NOTIFY_SOCKET"], socket.hasPrefix("/") || socket.hasPrefix("@"), socket.utf8.count > 1 {
            var bytes = Array(socket.utf8)
            if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }
            address = UnixSocketAddress(bytes)
        } else {
            address = nil
        }
        let pidMatches = environment["WATCHDOG_PID"].map { Int32($0) == ProcessIdentity.processID } ?? true
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
        let bytes = Array(message.utf8)
        do {
            return try UnixDatagram.send(bytes, to: address) == bytes.count
        } catch {
            // Said as false, which is all a caller learns: nothing the service does next depends
            // on whether systemd got the notification.
            return false
        }
    }

    /// One line fit for STATUS=: control characters replaced so it stays one line.
    package static func statusLine(_ text: String) -> String {
        "STATUS=" + String(text.unicodeScalars.map { $0.value < 0x20 ? " " : Character($0) })
    }
}
