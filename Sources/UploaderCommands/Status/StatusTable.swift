import Foundation
import UploaderSupport
import UploaderSpool

/// Plain `status`: a few lines per profile, for a person at an 80-column terminal.
enum StatusTable {
    static func text(_ reports: [StatusReport], problems: [StatusProblem] = [], now: Date) -> String {
        reports.flatMap { report in
            lines(report, now: now) + problems.filter { $0.profile == report.profile.name }.map { row("ATTENTION", $0.message) }
        }.joined(separator: "\n")
    }

    static func lines(_ report: StatusReport, now: Date) -> [String] {
        let c = report.census, state = report.daemon
        var lines: [String] = []
        lines.append("[\(report.profile.name)] \(report.profile.spool.root)")
        let daemon: String
        switch report.presence {
        case .running(let state): daemon = "running (pid \(state.pid)), destination \(state.reachable ? "reachable" : "UNREACHABLE")"
        case .runningUnseen: daemon = "running (its state file cannot be read)"
        case .died(let pid): daemon = "NOT RUNNING: " + (pid.map { "pid \($0)" } ?? "it") + " stopped without a clean exit"
        case .none, .cannotTell: daemon = "not running"
        }
        lines.append(row("daemon", daemon))
        if let reason = state?.pausedReason { lines.append(row("paused", reason.explanation)) }
        let oldest = c.queued.files > 0 ? c.oldestQueued.map { ", oldest \(ByteCount.duration(now.timeIntervalSince($0)))" } : nil
        lines.append(row("queued", count(c.queued) + (oldest ?? "")))
        lines.append(row("uploading", count(c.uploading)))
        lines += InFlightLines.lines(state?.inFlight ?? [])
        lines.append(row("retry", count(c.retry) + (c.nextDue.map { ", next due \(Timestamp.format($0))" } ?? "")))
        lines.append(row("failed", count(c.failed)))
        lines.append(row("sent (24h)", count(c.sent24h)))
        let refused = report.refused
        if refused.files > 0 {
            lines.append(row("refused", "\(ByteCount.files(refused.files)): not regular files or names too long (see the log)"))
        }
        lines.append(row("last error", report.lastError ?? "none"))
        return lines
    }

    /// `  label       value`: labels in a column 12 wide.
    static func row(_ label: String, _ value: String) -> String {
        "  " + label.padding(toLength: 12, withPad: " ", startingAt: 0) + value
    }

    /// `1 file, 10 B`, `3 files, 8.9 KiB`.
    static func count(_ t: SpoolCensus.Tally) -> String { "\(ByteCount.files(t.files)), \(ByteCount.format(t.bytes))" }
}
