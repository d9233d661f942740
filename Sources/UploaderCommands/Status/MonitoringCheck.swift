import Foundation
import UploaderSupport

/// `status --check`: one line and an exit status as the Monitoring Plugins guidelines say, so
/// Nagios, Icinga, Zabbix or Sensu can call it as a check.
///
/// `UPLOADER OK - 12 queued, 0 failed | 'queued'=12;;;0 'failed'=0;0;;0 …`: the state, what
/// made it so, then performance data (per profile labels `NAME_queued` when several).
enum MonitoringCheck {
    enum Verdict: Int32 {
        case ok = 0, warning = 1, critical = 2, unknown = 3

        var exitCode: Int32 { rawValue }
        var word: String { ["OK", "WARNING", "CRITICAL", "UNKNOWN"][Int(rawValue)] }
        /// Which verdict wins when several apply: CRITICAL, then WARNING, then UNKNOWN, then OK.
        var rank: Int { [0, 2, 3, 1][Int(rawValue)] }
    }

    struct Result {
        var verdict: Verdict
        var line: String
    }

    static func unknownLine(_ message: String) -> String { "UPLOADER UNKNOWN - " + oneLine(message) }

    static func evaluate(_ reports: [StatusReport], problems: [StatusProblem], options: StatusOptions, now: Date) -> Result {
        var verdict = Verdict.ok
        var reasons: [String] = []
        func raise(_ level: Verdict, _ reason: String) {
            if level.rank > verdict.rank { verdict = level }
            reasons.append(reason)
        }
        let several = reports.count > 1
        var perf: [String] = []
        for report in reports {
            let name = report.profile.name
            let prefix = several ? name + "_" : ""
            let subject = several ? name + ": " : ""
            for problem in problems where problem.profile == name {
                switch problem.kind {
                case .unreadable: raise(.unknown, subject + problem.message)
                case .daemonDown, .paused: raise(.critical, subject + problem.message)
                case .failed: break
                }
            }
            let c = report.census
            let failed = c.failed.files
            if let crit = options.critFailed, failed > crit {
                raise(.critical, subject + "\(failed) failed")
            } else if failed > options.warnFailed {
                raise(.warning, subject + "\(failed) failed")
            }
            if let crit = options.critQueued, c.queued.files > crit {
                raise(.critical, subject + "\(c.queued.files) queued")
            } else if let warn = options.warnQueued, c.queued.files > warn {
                raise(.warning, subject + "\(c.queued.files) queued")
            }
            let age = c.queued.files > 0 ? c.oldestQueued.map { max(0, now.timeIntervalSince($0)) } : nil
            if let age, let crit = options.critAge, age > crit {
                raise(.critical, subject + "oldest queued \(ByteCount.duration(age))")
            } else if let age, let warn = options.warnAge, age > warn {
                raise(.warning, subject + "oldest queued \(ByteCount.duration(age))")
            }
            perf += [
                metric(prefix + "queued", "\(c.queued.files)", warn: options.warnQueued, crit: options.critQueued),
                metric(prefix + "queued_bytes", "\(c.queued.bytes)B"),
                metric(prefix + "uploading", "\(c.uploading.files)"),
                metric(prefix + "retry", "\(c.retry.files)"),
                metric(prefix + "failed", "\(failed)", warn: options.warnFailed, crit: options.critFailed),
                metric(prefix + "sent_24h", "\(c.sent24h.files)"),
                metric(prefix + "oldest_queued", LogNumbers.fixed(age ?? 0, places: 1) + "s",
                       warn: options.warnAge.map { LogNumbers.fixed($0, places: 0) }, crit: options.critAge.map { LogNumbers.fixed($0, places: 0) }),
            ]
        }
        if verdict == .ok {
            let queued = reports.map(\.census.queued.files).reduce(0, +)
            let failed = reports.map(\.census.failed.files).reduce(0, +)
            let retry = reports.map(\.census.retry.files).reduce(0, +)
            reasons = ["\(queued) queued, \(retry) in retry, \(failed) failed" + (several ? " in \(reports.count) profiles" : "")]
        }
        let line = "UPLOADER \(verdict.word) - " + oneLine(reasons.joined(separator: "; ")) + " | " + perf.joined(separator: " ")
        return Result(verdict: verdict, line: line)
    }

    /// `'label'=value[UOM];warn;crit;0`, empty fields where no threshold is set.
    private static func metric(_ label: String, _ value: String, warn: CustomStringConvertible? = nil,
                               crit: CustomStringConvertible? = nil) -> String {
        "'\(label)'=\(value);\(warn.map { "\($0)" } ?? "");\(crit.map { "\($0)" } ?? "");0"
    }

    /// The plugin output is one line before `|`: line breaks and `|` in a message would end it.
    private static func oneLine(_ text: String) -> String {
        String(text.map { $0 == "\n" || $0 == "\r" || $0 == "|" ? " " : $0 })
    }
}
