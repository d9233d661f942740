import Foundation
import UploaderSupport
import UploaderConfig

/// How a profile finds out whether its destination can be reached, and which host's route
/// `interfaces` looks at: the destination's own when requests go direct (a TCP connect to its
/// host and port), the proxy's when they go through one (`proxy`, or libcurl's environment
/// variables), probed by a request through that proxy (`ProxyProbe`).
package struct ReachabilityPlan: Sendable {
    package let probe: (any ReachabilityProbe)?
    /// Where connections go first: the destination, or the proxy; nil when it cannot be told.
    package let routeHost: String?

    package init(profile: Profile, environment: [String: String]) {
        let direct = DestinationAddress.directProbe(of: profile)
        let origin = DestinationAddress.origin(of: profile)
        let scheme = origin.flatMap { o in o.range(of: "://").map { String(o[..<$0.lowerBound]) } } ?? "http"
        let route = ProxyEnvironment.route(for: scheme, profile: profile.proxy, environment: environment)
        if route.throughProxy, let origin {
            probe = ProxyProbe(url: origin, proxy: profile.proxy?.text, tls: profile.tls, timeout: profile.connectTimeout)
            routeHost = route.proxyHost
        } else {
            probe = direct
            routeHost = direct?.host
        }
    }

    /// `scheme://authority/` of an `http(s)://` URL (or URL template: its authority is literal).
    static func origin(ofURL url: String) -> String? {
        guard let marker = url.range(of: "://") else { return nil }
        let scheme = url[..<marker.lowerBound].lowercased()
        let authority = url[marker.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty else { return nil }
        return "\(scheme)://\(authority)/"
    }
}
