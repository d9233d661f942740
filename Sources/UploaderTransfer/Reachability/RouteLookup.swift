@preconcurrency import Glibc
import CSysShims
import Foundation
import UploaderSupport
import UploaderConfig

/// Which interface the route to the destination leaves by: the seam `interfaces` is checked
/// through (the kernel in production, a script in tests).
package protocol RouteLookup: Sendable {
    /// May block for name resolution.
    func check() -> RouteReport
}

/// Asks the kernel: resolves the destination's host, then `RTM_GETROUTE` on its first address
/// (the one a connection would try first), and names the route's output interface.
package struct KernelRoute: RouteLookup {
    package let host: String

    package init(host: String) { self.host = host }

    package func check() -> RouteReport {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, nil, &hints, &list)
        guard rc == 0, let first = list else { return .unknown("cannot resolve \(host): \(String(cString: gai_strerror(rc)))") }
        defer { freeaddrinfo(list) }
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        let found = uploader_route_interface(first.pointee.ai_addr, first.pointee.ai_addrlen, &name)
        guard found == 0 else { return .unknown("no route to \(host): \(SystemError("RTM_GETROUTE").reason)") }
        return .via(String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}
