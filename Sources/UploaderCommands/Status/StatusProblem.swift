import UploaderSupport
import UploaderConfig
import UploaderSpool

/// Something in a profile that needs an operator: what `status` exits non-zero for.
///
/// Each kind has its own exit status; with several, the most severe (the highest) is the
/// process's. A pause that ends by itself (offline, outside a window, a route) is none.
struct StatusProblem: Equatable {
    enum Kind: Int32, Comparable {
        /// Files in `retry/` with state `failed`: they wait for `uploader retry`.
        case failed = 2
        /// Paused for a reason only an operator clears (credentials refused, a host key).
        case paused = 3
        /// A daemon should run on the spool and none does (it died, or `--expect-daemon`).
        case daemonDown = 4
        /// The spool (or its lock) cannot be read: missing, or no permission for this user.
        case unreadable = 5

        static func < (a: Kind, b: Kind) -> Bool { a.rawValue < b.rawValue }

        /// The word in `--json`'s `problems` and plain status's lines.
        var name: String {
            switch self {
            case .failed: return "failed"
            case .paused: return "paused"
            case .daemonDown: return "daemon_down"
            case .unreadable: return "unreadable"
            }
        }
    }

    var kind: Kind
    var profile: String
    /// One line saying what and what to do.
    var message: String
}

extension StatusReport {
    /// This profile's problems, most severe first.
    func problems(expectDaemon: Bool) -> [StatusProblem] {
        var found: [StatusProblem] = []
        let name = profile.name
        for reason in unreadable {
            found.append(StatusProblem(kind: .unreadable, profile: name, message: reason))
        }
        switch presence {
        case .died(let pid):
            let who = pid.map { "the daemon (pid \($0))" } ?? "a daemon"
            found.append(StatusProblem(kind: .daemonDown, profile: name,
                                       message: "\(who) stopped without a clean exit (crashed or killed); start it again"))
        case .none where expectDaemon:
            found.append(StatusProblem(kind: .daemonDown, profile: name, message: "no daemon is running on \(profile.spool.root)"))
        case .cannotTell(let reason):
            found.append(StatusProblem(kind: .unreadable, profile: name, message: "cannot tell whether a daemon runs: \(reason)"))
        case .running, .runningUnseen, .none:
            break
        }
        if let reason = daemon?.pausedReason, reason.needsOperator {
            found.append(StatusProblem(kind: .paused, profile: name,
                                       message: "paused: \(reason.explanation)" + (lastError.map { " (last: \($0))" } ?? "")))
        }
        if census.failed.files > 0 {
            found.append(StatusProblem(kind: .failed, profile: name,
                                       message: "\(ByteCount.files(census.failed.files)) failed for good; "
                                           + "see retry/, then: uploader retry --profile \(name) --all"))
        }
        return found.sorted { $0.kind > $1.kind }
    }
}

extension [StatusProblem] {
    /// The exit status of `status`: 0 with no problem, else the most severe kind's.
    var exitCode: Int32 { map(\.kind.rawValue).max() ?? 0 }
}
