import Foundation
import UploaderSupport
import UploaderConfig

/// Can the destination be reached at all? A TCP connect to its host and port, bounded by
/// `connect_timeout` — the same thing a failed upload could not do.
package struct TCPProbe: Sendable {
    package let host: String
    package let port: UInt16
    package let timeout: TimeInterval

    package init(host: String, port: UInt16, timeout: TimeInterval) {
        self.host = host
        self.port = port
        self.timeout = timeout
    }

    /// The host and port of an `http(s)://` URL template (the host is literal: placeholders are only allowed after it).
    package init?(urlTemplate: String, timeout: TimeInterval) {
        let sample = urlTemplate.replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: "")
        guard let components = URLComponents(string: sample), let host = components.host, !host.isEmpty else { return nil }
        let scheme = components.scheme?.lowercased() ?? "http"
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        self.init(host: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host, port: UInt16(clamping: port), timeout: timeout)
    }

    /// Nil when a connection was made; otherwise why not.
    package func check() -> String? {
        let addresses: [StreamAddress]
        do {
            addresses = try NameResolution.streamAddresses(of: host, port: port)
        } catch {
            return "cannot resolve \(host): \(error.description)"
        }
        var lastError = "no address for \(host)"
        for address in addresses {
            guard let problem = connect(address) else { return nil }
            lastError = problem
        }
        return lastError
    }

    private func connect(_ address: StreamAddress) -> String? {
        do {
            try TCPConnect.connect(to: address, timeout: max(1, min(timeout, 3600)))
            return nil
        } catch {
            switch error {
            case .socket(let code): return "socket: \(code.description)"
            case .connect(let code): return "connect to \(host):\(port): \(code.description)"
            case .timedOut: return "connect to \(host):\(port): timed out after \(Int(timeout))s"
            }
        }
    }
}
