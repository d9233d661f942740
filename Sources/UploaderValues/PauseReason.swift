/// Why a running profile starts no upload now: `status`'s `paused_reason`. One value rather
/// than a flag per cause, so the upload window and the allowed interfaces (DESIGN §8,
/// `outside_window` and `interface`) each add a case and `status` needs no other change.
package enum PauseReason: String, Codable, Sendable, CaseIterable {
    /// The destination cannot be reached; the profile probes it and resumes by itself.
    case offline
    /// Outside every `upload_window`: uploads start again when the next window opens.
    case outsideWindow = "outside_window"
    /// The route to the destination leaves by an interface not in `interfaces`.
    case interface
    /// The destination refused our credentials on several files in a row (DESIGN §12): one file
    /// is tried again after a backoff, and at once on SIGHUP or a change of a credentials file.
    case rejected
    /// The SFTP server's host key is not the one `known_hosts` or `host_key_sha256` names (DESIGN
    /// §14): never taken for offline. Retried like `rejected`, and at once when `known_hosts` changes.
    case hostKey = "host_key"

    /// Whether only an operator ends this pause (`status` exits non-zero for it); the others
    /// end by themselves (the network, the clock, a route).
    package var needsOperator: Bool {
        switch self {
        case .rejected, .hostKey: return true
        case .offline, .outsideWindow, .interface: return false
        }
    }

    /// The words plain `status` prints after `paused`.
    package var explanation: String {
        switch self {
        case .offline: return "offline: the destination cannot be reached; resumes by itself"
        case .outsideWindow: return "outside_window: no upload window is open; resumes when one opens"
        case .interface: return "interface: the route to the destination leaves by an interface not allowed"
        case .rejected: return "rejected: credentials refused; retried after backoff or SIGHUP"
        case .hostKey: return "host_key: the server's host key does not match; retried after backoff or SIGHUP"
        }
    }
}
