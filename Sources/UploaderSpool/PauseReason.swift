/// Why a running profile starts no upload now: `status`'s `paused_reason`. One value rather
/// than a flag per cause, so the upload window and the allowed interfaces (DESIGN §8,
/// `outside_window` and `interface`) each add a case and `status` needs no other change.
package enum PauseReason: String, Codable, Sendable, CaseIterable {
    /// The destination cannot be reached; the profile probes it and resumes by itself.
    case offline

    /// The words plain `status` prints after `paused`.
    package var explanation: String {
        switch self {
        case .offline: return "offline: the destination cannot be reached; resumes by itself"
        }
    }
}
