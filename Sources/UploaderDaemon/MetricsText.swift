import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore

/// What the metrics file says about one profile at one moment.
package struct ProfileMetrics: Sendable {
    package var profile: String
    /// Counters since this process started (kept across reloads of the profile).
    package var totals: RunTotals
    /// The spool as last counted; nil until the first count is done.
    package var census: SpoolCensus?
    package var destinationUp: Bool
    /// Why nothing starts now (offline, outside every upload window, a route by an interface not
    /// allowed, credentials refused); nil while uploads may start.
    package var pausedReason: PauseReason?

    package init(profile: String, totals: RunTotals, census: SpoolCensus?, destinationUp: Bool, pausedReason: PauseReason? = nil) {
        self.profile = profile
        self.totals = totals
        self.census = census
        self.destinationUp = destinationUp
        self.pausedReason = pausedReason
    }
}

/// Renders the Prometheus text exposition format (version 0.0.4) that node_exporter's
/// textfile collector reads: HELP and TYPE for each family, label values escaped.
package enum MetricsText {
    package static func render(_ profiles: [ProfileMetrics], now: Date) -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: (inout String) -> Void) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            samples(&out)
        }
        func line(_ out: inout String, _ name: String, _ labels: [(String, String)], _ value: String) {
            let text = labels.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",")
            out += "\(name){\(text)} \(value)\n"
        }

        family("uploader_files_total", "counter", "Files this process finished, by result (sent; retry: will be tried again; failed: needs uploader retry).") { out in
            for p in profiles {
                line(&out, "uploader_files_total", [("profile", p.profile), ("result", "sent")], String(p.totals.sent))
                line(&out, "uploader_files_total", [("profile", p.profile), ("result", "retry")], String(p.totals.retried))
                line(&out, "uploader_files_total", [("profile", p.profile), ("result", "failed")], String(p.totals.failed))
            }
        }
        family("uploader_bytes_sent_total", "counter", "Bytes of the files this process delivered.") { out in
            for p in profiles { line(&out, "uploader_bytes_sent_total", [("profile", p.profile)], String(p.totals.bytesSent)) }
        }
        family("uploader_queue_files", "gauge", "Files in the spool by state (queued and uploading in the outbox, retry and failed in retry/).") { out in
            for p in profiles {
                let c = p.census ?? SpoolCensus()
                for (state, tally) in [("queued", c.queued), ("uploading", c.uploading), ("retry", c.retry), ("failed", c.failed)] {
                    line(&out, "uploader_queue_files", [("profile", p.profile), ("state", state)], String(tally.files))
                }
            }
        }
        family("uploader_queue_bytes", "gauge", "Bytes still to deliver: files queued, uploading or waiting in retry/ (not failed).") { out in
            for p in profiles {
                let c = p.census ?? SpoolCensus()
                line(&out, "uploader_queue_bytes", [("profile", p.profile)], String(c.queued.bytes + c.uploading.bytes + c.retry.bytes))
            }
        }
        family("uploader_destination_up", "gauge", "1 when the destination is reachable, 0 while the profile is paused offline.") { out in
            for p in profiles { line(&out, "uploader_destination_up", [("profile", p.profile)], p.destinationUp ? "1" : "0") }
        }
        family("uploader_paused", "gauge", "1 for the reason a profile starts no upload now (offline, outside_window, interface, rejected), 0 for the others; all 0 while uploads may start.") { out in
            for p in profiles {
                for reason in PauseReason.allCases {
                    line(&out, "uploader_paused", [("profile", p.profile), ("reason", reason.rawValue)], p.pausedReason == reason ? "1" : "0")
                }
            }
        }
        family("uploader_oldest_queued_seconds", "gauge", "Age of the oldest queued file (by mtime); 0 when none is queued.") { out in
            for p in profiles {
                let age = p.census?.oldestQueued.map { max(0, now.timeIntervalSince($0)) } ?? 0
                line(&out, "uploader_oldest_queued_seconds", [("profile", p.profile)], number(age))
            }
        }
        family("uploader_upload_duration_seconds", "histogram", "Duration of successful uploads.") { out in
            for p in profiles {
                for (index, bound) in RunTotals.durationBounds.enumerated() {
                    line(&out, "uploader_upload_duration_seconds_bucket", [("profile", p.profile), ("le", number(bound))],
                         String(p.totals.durationBuckets[index]))
                }
                line(&out, "uploader_upload_duration_seconds_bucket", [("profile", p.profile), ("le", "+Inf")], String(p.totals.durationCount))
                line(&out, "uploader_upload_duration_seconds_sum", [("profile", p.profile)], number(p.totals.durationSum))
                line(&out, "uploader_upload_duration_seconds_count", [("profile", p.profile)], String(p.totals.durationCount))
            }
        }
        return out
    }

    /// A label value escaped as the format requires: backslash, double quote, line feed.
    package static func escape(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    /// A float as Prometheus reads it, without exponent noise for ordinary values.
    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(format: "%.6g", value)
    }
}
