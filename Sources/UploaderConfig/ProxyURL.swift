import Foundation
import UploaderSupport

/// A proxy's URL, checked: the `proxy` key of a profile, or a proxy environment variable.
///
/// The text goes to libcurl as written (`CURLOPT_PROXY`); the parts are kept for the route
/// lookup (`interfaces`) and for printing. User and password in the URL are credentials:
/// `redacted` hides them and `secrets` lists them for the log scrubber.
package struct ProxyURL: Sendable, Equatable, CustomStringConvertible {
    /// The schemes libcurl takes for a proxy.
    package static let schemes = ["http", "https", "socks4", "socks4a", "socks5", "socks5h"]

    /// As written, for libcurl.
    package let text: String
    /// Lowercased.
    package let scheme: String
    /// Without IPv6 brackets.
    package let host: String
    package let port: Int?
    /// What stood before `@` (`user:password`), if anything.
    package let userinfo: String?

    /// Parses `text`; the error never quotes it (it may hold a password). `defaultScheme`: the
    /// scheme assumed when none is written (libcurl assumes `http` for an environment variable);
    /// nil requires one.
    package static func parse(_ text: String, defaultScheme: String? = nil) -> Result<ProxyURL, ProxyURLError> {
        let schemeList = schemes.map { "\($0)://" }.joined(separator: ", ")
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == " " }) else {
            return .failure(ProxyURLError("proxy must not contain spaces or control characters"))
        }
        let scheme: String
        let rest: Substring
        if let marker = text.range(of: "://") {
            scheme = text[..<marker.lowerBound].lowercased()
            rest = text[marker.upperBound...]
        } else if let defaultScheme {
            scheme = defaultScheme
            rest = text[...]
        } else {
            return .failure(ProxyURLError("proxy must start with one of \(schemeList)"))
        }
        guard schemes.contains(scheme) else { return .failure(ProxyURLError("proxy must start with one of \(schemeList)")) }
        var authority = rest
        if let slash = rest.firstIndex(of: "/") {
            guard rest[slash...] == "/" else { return .failure(ProxyURLError("proxy must name only scheme, host and port (no path)")) }
            authority = rest[..<slash]
        }
        if authority.contains("?") || authority.contains("#") {
            return .failure(ProxyURLError("proxy must name only scheme, host and port (no query)"))
        }
        var userinfo: String?
        if let at = authority.lastIndex(of: "@") {
            userinfo = String(authority[..<at])
            authority = authority[authority.index(after: at)...]
        }
        var host = authority
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return .failure(ProxyURLError("proxy has an unterminated IPv6 address")) }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return .failure(ProxyURLError("proxy has an invalid host")) }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty else { return .failure(ProxyURLError("proxy has no host")) }
        var port: Int?
        if let portText {
            guard portText.utf8.count <= 5, !portText.isEmpty, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let number = Int(portText), (1...65535).contains(number)
            else { return .failure(ProxyURLError("proxy has an invalid port (use 1 to 65535)")) }
            port = number
        }
        return .success(ProxyURL(text: text, scheme: scheme, host: String(host), port: port, userinfo: userinfo))
    }

    /// The URL with `<redacted>` for its user and password: what check-config prints.
    package var redacted: String {
        guard userinfo != nil else { return text }
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://<redacted>@\(hostPart)" + (port.map { ":\($0)" } ?? "")
    }

    package var description: String { redacted }

    /// The credentials in every form they may be written or quoted in: the whole URL, the
    /// user:password part and the password, as written and percent-decoded.
    package var secrets: [String] {
        guard let userinfo, !userinfo.isEmpty else { return [] }
        var values = [text, userinfo]
        if let decoded = userinfo.removingPercentEncoding { values.append(decoded) }
        if let colon = userinfo.firstIndex(of: ":") {
            let password = String(userinfo[userinfo.index(after: colon)...])
            values.append(password)
            if let decoded = password.removingPercentEncoding { values.append(decoded) }
        }
        return values.filter { !$0.isEmpty }
    }
}

/// Why a proxy URL was refused; never quotes the URL.
package struct ProxyURLError: Error, Sendable, Equatable, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
