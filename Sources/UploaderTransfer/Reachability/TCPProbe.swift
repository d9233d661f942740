@preconcurrency import Glibc
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
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            return "cannot resolve \(host): \(String(cString: gai_strerror(rc)))"
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address for \(host)"
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            if let problem = connect(info.pointee) { lastError = problem } else { return nil }
            cursor = info.pointee.ai_next
        }
        return lastError
    }

    private func connect(_ info: addrinfo) -> String? {
        let fd = socket(info.ai_family, info.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), info.ai_protocol)
        guard fd >= 0 else { return "socket: \(Errno.current.description)" }
        defer { close(fd) }
        if Glibc.connect(fd, info.ai_addr, info.ai_addrlen) == 0 { return nil }
        guard Errno.current == .inProgress else { return "connect to \(host):\(port): \(Errno.current.description)" }
        var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let ms = Int32(max(1, min(timeout, 3600)) * 1000)
        let ready = poll(&pfd, 1, ms)
        if ready == 0 { return "connect to \(host):\(port): timed out after \(Int(timeout))s" }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        return error == 0 ? nil : "connect to \(host):\(port): \(Errno(rawValue: error).description)"
    }
}
