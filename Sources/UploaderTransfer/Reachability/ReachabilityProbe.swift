import UploaderSupport
import UploaderConfig

/// Can the destination be reached at all? The seam the prober goes through: a TCP connect
/// in production, a scripted answer in tests.
package protocol ReachabilityProbe: Sendable {
    /// Nil when the destination answered; otherwise why not. May block up to its timeout.
    func check() -> String?
}

extension TCPProbe: ReachabilityProbe {}
