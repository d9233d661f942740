import UploaderSupport
import UploaderConfig

/// The proxy libcurl takes from the environment for a URL's scheme when no `proxy` key is set,
/// read the way libcurl reads it: `SCHEME_proxy`, then its upper-case form (never `HTTP_PROXY`,
/// which a CGI request could set), then `all_proxy`, `ALL_PROXY`; an empty value counts as unset.
///
/// libcurl does this itself for every request; the daemon needs the answer only to probe and to
/// look up the route the way requests will go. `no_proxy` is left to libcurl: the probe through
/// libcurl honours it, and the route lookup then looks at the proxy's route all the same.
package enum ProxyEnvironment {
    /// The variable's name and its value, or nil when none applies.
    package static func variable(for scheme: String, in environment: [String: String]) -> (name: String, value: String)? {
        let lower = scheme.lowercased() + "_proxy"
        var names = [lower]
        if lower != "http_proxy" { names.append(lower.uppercased()) }
        for name in names + ["all_proxy", "ALL_PROXY"] {
            // libcurl's curl_getenv takes an empty value for an unset one.
            if let value = environment[name], !value.isEmpty { return (name, value) }
        }
        return nil
    }

    /// Whether requests to a `scheme` URL go through a proxy (the profile's `proxy`, else the
    /// environment's), and the proxy's host when it can be told (a value without a scheme is an
    /// `http://` proxy, as libcurl takes it). A variable libcurl cannot use either still counts
    /// as a proxy: uploads then fail with libcurl's own message, and the probe fails the same way.
    package static func route(for scheme: String, profile: ProxyURL?,
                              environment: [String: String]) -> (throughProxy: Bool, proxyHost: String?) {
        if let profile { return (true, profile.host) }
        guard let (_, value) = variable(for: scheme, in: environment) else { return (false, nil) }
        switch ProxyURL.parse(value, defaultScheme: "http") {
        case .success(let proxy): return (true, proxy.host)
        case .failure: return (true, nil)
        }
    }
}
