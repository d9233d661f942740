@preconcurrency import Glibc

/// An address a stream socket may connect to, as getaddrinfo(3) gave it: the socket's family,
/// type and protocol, and the `sockaddr` bytes. A value, so the answer outlives `freeaddrinfo`.
package struct StreamAddress: Sendable {
    package let family: Int32
    package let socketType: Int32
    package let socketProtocol: Int32
    /// The `sockaddr_in` or `sockaddr_in6`, `ai_addrlen` bytes.
    package let bytes: [UInt8]
}

/// Why getaddrinfo(3) gave no answer: its own code (EAI_…), with gai_strerror(3)'s text as description.
package struct ResolutionFailure: Error, Hashable, Sendable, CustomStringConvertible {
    package let code: Int32

    package var description: String { String(cString: gai_strerror(code)) }
}

/// Host names to addresses (getaddrinfo(3), NSS and /etc/hosts included), at this edge so that
/// the reachability probe names no libc structure. May block as long as the resolver does.
package enum NameResolution {
    /// The TCP addresses of `host` at `port`, IPv4 and IPv6 alike, in the order a connection
    /// should try them.
    package static func streamAddresses(of host: String, port: UInt16) throws(ResolutionFailure) -> [StreamAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0 else { throw ResolutionFailure(code: rc) }
        defer { freeaddrinfo(list) }
        var addresses: [StreamAddress] = []
        var cursor = list
        while let info = cursor?.pointee {
            let bytes = info.ai_addr.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(info.ai_addrlen))) } ?? []
            addresses.append(StreamAddress(family: info.ai_family, socketType: info.ai_socktype,
                                           socketProtocol: info.ai_protocol, bytes: bytes))
            cursor = info.ai_next
        }
        return addresses
    }
}
