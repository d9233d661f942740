@preconcurrency import Glibc
import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore
import UploaderDaemon

/// `uploader status`: a table for people or one JSON object for scripts, from the spools.
enum StatusCommand {
    static func run(_ config: Configuration, profiles: [String], json: Bool) -> Int32 {
        let selected = profiles.isEmpty ? config.profiles : config.profiles.filter { profiles.contains($0.name) }
        if let unknown = profiles.first(where: { name in !config.profiles.contains { $0.name == name } }) {
            Daemon.printError("no profile named \"\(unknown)\" in \(config.path)")
            return Daemon.ExitCode.usage
        }
        let now = Date()
        let unlistable = DirectoryWalker.printingOnce(Daemon.printError)
        var reports: [(Profile, SpoolCensus, DaemonState?)] = []
        for profile in selected {
            let spool = Spool(paths: profile.spool)
            let census = SpoolCensus.take(spool, ignore: IgnoreRules(patterns: profile.ignore), recursive: profile.recursive, now: now,
                                          unlistable: unlistable)
            reports.append((profile, census, DaemonState.readIfRunning(spool.paths)))
        }
        print(json ? jsonText(reports, now: now) : table(reports, now: now))
        return 0
    }

    static func jsonText(_ reports: [(Profile, SpoolCensus, DaemonState?)], now: Date) -> String {
        func tally(_ t: SpoolCensus.Tally, extra: String = "") -> String {
            "{\"files\": \(t.files), \"bytes\": \(t.bytes)\(extra)}"
        }
        func optional(_ s: String?) -> String { s.map(JSONText.quote) ?? "null" }
        var parts: [String] = []
        for (profile, c, state) in reports {
            let oldest = c.oldestQueued.map { String(format: "%.1f", max(0, now.timeIntervalSince($0))) } ?? "null"
            let due = c.nextDue.map { JSONText.quote(Timestamp.format($0)) } ?? "null"
            let refused = max(c.refused.files, state?.refused ?? 0)
            let fields = [
                "\"queued\": \(tally(c.queued))",
                "\"uploading\": \(tally(c.uploading))",
                "\"retry\": \(tally(c.retry, extra: ", \"next_due\": \(due)"))",
                "\"failed\": \(tally(c.failed))",
                "\"sent_24h\": \(tally(c.sent24h))",
                "\"refused\": {\"files\": \(refused)}",
                "\"oldest_queued_seconds\": \(oldest)",
                "\"reachable\": \(state.map { $0.reachable ? "true" : "false" } ?? "null")",
                "\"paused_reason\": \(optional(state?.pausedReason))",
                "\"last_error\": \(optional(state?.lastError ?? c.lastError))",
                "\"daemon_pid\": \(state.map { String($0.pid) } ?? "null")",
            ]
            parts.append("\(JSONText.quote(profile.name)): {\(fields.joined(separator: ", "))}")
        }
        return "{\"profiles\": {\(parts.joined(separator: ", "))}}"
    }

    static func table(_ reports: [(Profile, SpoolCensus, DaemonState?)], now: Date) -> String {
        var lines: [String] = []
        for (profile, c, state) in reports {
            func row(_ label: String, _ t: SpoolCensus.Tally, _ extra: String = "") -> String {
                label.padding(toLength: 12, withPad: " ", startingAt: 0) + "\(t.files) files, \(ByteCount.format(t.bytes))" + extra
            }
            lines.append("[\(profile.name)] \(profile.spool.root)")
            let daemon = state.map { "running (pid \($0.pid)), destination \($0.reachable ? "reachable" : "UNREACHABLE")" } ?? "not running"
            lines.append("  daemon      \(daemon)")
            if let reason = state?.pausedReason { lines.append("  paused      \(reason)") }
            lines.append("  " + row("queued", c.queued, c.oldestQueued.map { ", oldest \(ByteCount.duration(now.timeIntervalSince($0)))" } ?? ""))
            lines.append("  " + row("uploading", c.uploading))
            lines.append("  " + row("retry", c.retry, c.nextDue.map { ", next due \(Timestamp.format($0))" } ?? ""))
            lines.append("  " + row("failed", c.failed))
            lines.append("  " + row("sent (24h)", c.sent24h))
            let refused = max(c.refused.files, state?.refused ?? 0)
            if refused > 0 { lines.append("  refused     \(refused) files: not regular files or names too long (see the log)") }
            lines.append("  last error  \(state?.lastError ?? c.lastError ?? "none")")
        }
        return lines.joined(separator: "\n")
    }
}

/// Human-readable sizes and durations for `status`.
enum ByteCount {
    static func format(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }

    static func duration(_ seconds: Double) -> String {
        if seconds < 120 { return String(format: "%.0fs", seconds) }
        if seconds < 7200 { return String(format: "%.0fm", seconds / 60) }
        if seconds < 172800 { return String(format: "%.1fh", seconds / 3600) }
        return String(format: "%.1fd", seconds / 86400)
    }
}
