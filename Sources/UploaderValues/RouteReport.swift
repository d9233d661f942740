/// What a route lookup found: the interface the kernel's route to the destination leaves by,
/// or why it could not tell (no address, no route).
package enum RouteReport: Sendable, Equatable {
    case via(String)
    case unknown(String)
}
