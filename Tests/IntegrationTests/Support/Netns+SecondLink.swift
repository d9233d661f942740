import Foundation

/// A second link between the two namespaces, for tests that move the route to the destination
/// from one link to the other (`interfaces`, #14): veth2-a 10.213.1.1/30 ↔ veth2-b 10.213.1.2/30,
/// and a service address, 10.213.9.1 on b's loopback, that a reaches by whichever link its
/// route names.
extension Netns {
    static let secondInterfaceA = "veth2-a"
    static let secondInterfaceB = "veth2-b"
    static let serviceAddress = "10.213.9.1"

    func addSecondLinkAndServiceAddress() throws {
        try Self.ip(["-n", nameA, "link", "add", Self.secondInterfaceA, "type", "veth", "peer", "name", Self.secondInterfaceB,
                     "netns", nameB])
        try Self.ip(["-n", nameA, "addr", "add", "10.213.1.1/30", "dev", Self.secondInterfaceA])
        try Self.ip(["-n", nameB, "addr", "add", "10.213.1.2/30", "dev", Self.secondInterfaceB])
        try Self.ip(["-n", nameA, "link", "set", Self.secondInterfaceA, "up"])
        try Self.ip(["-n", nameB, "link", "set", Self.secondInterfaceB, "up"])
        try Self.ip(["-n", nameB, "addr", "add", "\(Self.serviceAddress)/32", "dev", "lo"])
        try routeService(bySecondLink: false)
    }

    /// Points a's route to the service address at the first link (veth-a) or the second (veth2-a).
    func routeService(bySecondLink second: Bool) throws {
        let (gateway, device) = second ? ("10.213.1.2", Self.secondInterfaceA) : (addressB, interfaceA)
        try Self.ip(["-n", nameA, "route", "replace", "\(Self.serviceAddress)/32", "via", gateway, "dev", device])
    }
}
