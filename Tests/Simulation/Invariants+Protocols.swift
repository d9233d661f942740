import Foundation

/// The invariants of the resumable protocols, judged by the simulated servers from what they
/// received and what their answers told the client.
extension Simulation {
    /// Both protocols' invariants (each holds trivially in a schedule of the other destination).
    func checkProtocols() {
        check(.s3PartsSentOnce)
        check(.tusOffsetForward)
        check(.sftpFinalNameWhole)
    }

    func checkProtocol(_ invariant: Invariant) {
        let breaches: [String]
        switch invariant {
        case .s3PartsSentOnce: breaches = (server.speaking as? SimS3Server)?.violations ?? []
        case .tusOffsetForward: breaches = (server.speaking as? SimTusServer)?.violations ?? []
        case .sftpFinalNameWhole: breaches = (server.speaking as? SimSFTPServer)?.violations ?? []
        default: preconditionFailure("\(invariant) is not a protocol's")
        }
        if let first = breaches.first { fail(invariant, first) }
    }
}
