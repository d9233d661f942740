import Foundation
import UploaderSupport
import UploaderConfig

/// Which redirects `CurlTransport` follows: only to the same scheme and host:port.
///
/// Re-sending the body (and its Authorization header) elsewhere, or from https down to
/// http, would leak it; such a 3xx is returned as is and ends up a permanent failure.
package enum RedirectPolicy {
    package static func mayFollow(from current: String, to target: String) -> Bool {
        guard let a = URLComponents(string: current), let b = URLComponents(string: target),
              let schemeA = a.scheme?.lowercased(), let schemeB = b.scheme?.lowercased(),
              schemeA == schemeB, schemeA == "http" || schemeA == "https",
              let hostA = a.host?.lowercased(), let hostB = b.host?.lowercased(), hostA == hostB
        else { return false }
        let defaultPort = schemeA == "https" ? 443 : 80
        return (a.port ?? defaultPort) == (b.port ?? defaultPort)
    }
}
