import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// The Prometheus text rendering of the metrics file.
@Suite struct MetricsTextTests {
    @Test func labelValuesEscapeBackslashQuoteAndNewline() {
        #expect(MetricsText.escape(#"a\b"c"# + "\nd") == #"a\\b\"c\nd"#)
        #expect(MetricsText.escape("plain-name") == "plain-name")
    }

    @Test func everyFamilyHasHelpAndTypeBeforeItsSamples() {
        let text = MetricsText.render([ProfileMetrics(profile: "p", totals: RunTotals(), census: nil, destinationUp: true)], now: Date())
        let families = ["uploader_files_total": "counter", "uploader_bytes_sent_total": "counter",
                        "uploader_queue_files": "gauge", "uploader_queue_bytes": "gauge", "uploader_destination_up": "gauge",
                        "uploader_paused": "gauge",
                        "uploader_oldest_queued_seconds": "gauge", "uploader_upload_duration_seconds": "histogram"]
        let lines = text.split(separator: "\n").map(String.init)
        for (name, type) in families {
            let typeLine = lines.firstIndex(of: "# TYPE \(name) \(type)")
            let helpLine = lines.firstIndex { $0.hasPrefix("# HELP \(name) ") }
            let firstSample = lines.firstIndex { $0.hasPrefix(name + "{") || $0.hasPrefix(name + "_") && !$0.hasPrefix("#") }
            #expect(helpLine != nil && typeLine != nil && firstSample != nil, "\(name)")
            if let helpLine, let typeLine, let firstSample { #expect(helpLine < typeLine && typeLine < firstSample, "\(name)") }
        }
        #expect(text.hasSuffix("\n"))
    }

    @Test func histogramBucketsAreCumulativeAndEndWithInfEqualToCount() {
        var stats = RunTotals()
        stats.recordSent(bytes: 10, seconds: 0.02)
        stats.recordSent(bytes: 20, seconds: 2)
        stats.recordSent(bytes: 30, seconds: 5000)
        let text = MetricsText.render([ProfileMetrics(profile: "p", totals: stats, census: nil, destinationUp: false)], now: Date())
        #expect(text.contains(#"uploader_upload_duration_seconds_bucket{profile="p",le="0.01"} 0"#))
        #expect(text.contains(#"uploader_upload_duration_seconds_bucket{profile="p",le="0.05"} 1"#))
        #expect(text.contains(#"uploader_upload_duration_seconds_bucket{profile="p",le="5"} 2"#))
        #expect(text.contains(#"uploader_upload_duration_seconds_bucket{profile="p",le="1800"} 2"#))
        #expect(text.contains(#"uploader_upload_duration_seconds_bucket{profile="p",le="+Inf"} 3"#))
        #expect(text.contains(#"uploader_upload_duration_seconds_count{profile="p"} 3"#))
        #expect(text.contains(#"uploader_bytes_sent_total{profile="p"} 60"#))
        #expect(text.contains(#"uploader_destination_up{profile="p"} 0"#))
    }

    @Test func pausedGaugeSaysWhichReasonHoldsAndIsAllZeroWhileUploading() {
        let text = MetricsText.render([
            ProfileMetrics(profile: "night", totals: RunTotals(), census: nil, destinationUp: true, pausedReason: .outsideWindow),
            ProfileMetrics(profile: "live", totals: RunTotals(), census: nil, destinationUp: true),
            ProfileMetrics(profile: "revoked", totals: RunTotals(), census: nil, destinationUp: true, pausedReason: .rejected),
        ], now: Date())
        let paused = text.split(separator: "\n").filter { $0.hasPrefix("uploader_paused{") }.map(String.init)
        #expect(paused == [
            #"uploader_paused{profile="night",reason="offline"} 0"#,
            #"uploader_paused{profile="night",reason="outside_window"} 1"#,
            #"uploader_paused{profile="night",reason="interface"} 0"#,
            #"uploader_paused{profile="night",reason="rejected"} 0"#,
            #"uploader_paused{profile="night",reason="host_key"} 0"#,
            #"uploader_paused{profile="live",reason="offline"} 0"#,
            #"uploader_paused{profile="live",reason="outside_window"} 0"#,
            #"uploader_paused{profile="live",reason="interface"} 0"#,
            #"uploader_paused{profile="live",reason="rejected"} 0"#,
            #"uploader_paused{profile="live",reason="host_key"} 0"#,
            #"uploader_paused{profile="revoked",reason="offline"} 0"#,
            #"uploader_paused{profile="revoked",reason="outside_window"} 0"#,
            #"uploader_paused{profile="revoked",reason="interface"} 0"#,
            #"uploader_paused{profile="revoked",reason="rejected"} 1"#,
            #"uploader_paused{profile="revoked",reason="host_key"} 0"#,
        ])
    }

    @Test func countersOfAReplacedRunnerAddUp() {
        var a = RunTotals(), b = RunTotals()
        a.recordSent(bytes: 5, seconds: 0.2)
        a.retried += 1
        b.recordSent(bytes: 7, seconds: 0.3)
        b.failed += 1
        let sum = a + b
        #expect(sum.sent == 2 && sum.retried == 1 && sum.failed == 1 && sum.bytesSent == 12 && sum.durationCount == 2)
        #expect(sum.durationBuckets == zip(a.durationBuckets, b.durationBuckets).map { $0 + $1 })
    }
}
