import Foundation
import UploaderSupport
import UploaderSpool

/// `status --json`: one object, stable keys, every count as `{"files": N, "bytes": N}`.
enum StatusJSON {
    static func text(_ reports: [StatusReport], problems: [StatusProblem] = [], now: Date) -> String {
        let parts = reports.map { report in "\(JSONText.quote(report.profile.name)): \(profile(report, now: now))" }
        let listed = problems.map { p in
            "{\"profile\": \(JSONText.quote(p.profile)), \"problem\": \"\(p.kind.name)\", \"exit_status\": \(p.kind.rawValue), "
                + "\"message\": \(JSONText.quote(p.message))}"
        }
        return "{\"profiles\": {\(parts.joined(separator: ", "))}, \"problems\": [\(listed.joined(separator: ", "))]}"
    }

    private static func profile(_ report: StatusReport, now: Date) -> String {
        let c = report.census, state = report.daemon
        let oldest = c.oldestQueued.map { String(format: "%.1f", max(0, now.timeIntervalSince($0))) } ?? "null"
        let due = c.nextDue.map { JSONText.quote(Timestamp.format($0)) } ?? "null"
        let fields = [
            "\"queued\": \(tally(c.queued))",
            "\"uploading\": \(tally(c.uploading))",
            "\"in_flight\": [\((state?.inFlight ?? []).map(inFlight).joined(separator: ", "))]",
            "\"retry\": \(tally(c.retry, extra: ", \"next_due\": \(due)"))",
            "\"failed\": \(tally(c.failed))",
            "\"sent_24h\": \(tally(c.sent24h))",
            "\"refused\": \(tally(report.refused))",
            "\"oldest_queued_seconds\": \(oldest)",
            "\"reachable\": \(state.map { $0.reachable ? "true" : "false" } ?? "null")",
            "\"paused_reason\": \(optional(state?.pausedReason?.rawValue))",
            "\"last_error\": \(optional(report.lastError))",
            "\"daemon_pid\": \(state.map { String($0.pid) } ?? "null")",
        ]
        return "{\(fields.joined(separator: ", "))}"
    }

    private static func inFlight(_ f: InFlightFile) -> String {
        "{\"path\": \(JSONText.quote(f.path)), \"size\": \(f.size), \"bytes_sent\": \(f.bytesSent), "
            + "\"rate_bytes_per_second\": \(f.rateBytesPerSecond), \"eta_seconds\": \(f.etaSeconds.map(String.init) ?? "null"), "
            + "\"started_at\": \(JSONText.quote(f.startedAt))}"
    }

    private static func tally(_ t: SpoolCensus.Tally, extra: String = "") -> String {
        "{\"files\": \(t.files), \"bytes\": \(t.bytes)\(extra)}"
    }

    private static func optional(_ s: String?) -> String { s.map(JSONText.quote) ?? "null" }
}
