import Foundation
import Testing

/// The `metrics_file`, read back with Python's prometheus_client text parser.
@Suite struct MetricsFileTests {
    /// Parsed metrics: samples by `name{label=value,…}` (labels sorted) and family types by name.
    struct Parsed {
        var samples: [String: Double] = [:]
        var types: [String: String] = [:]

        subscript(_ name: String, _ labels: [String: String] = [:]) -> Double? {
            samples[Parsed.key(name, labels)]
        }

        static func key(_ name: String, _ labels: [String: String]) -> String {
            name + "{" + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + "}"
        }
    }

    static func parse(_ path: String) throws -> Parsed {
        let script = try PackagePaths.fixture("parse_metrics.py")
        let result = try ProcessRunner.run([try TestPython.path(), script, path], timeout: 30)
        guard result.exitCode == 0 else { throw HarnessError("prometheus_client could not parse \(path): \(result)") }
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        var parsed = Parsed()
        for sample in object?["samples"] as? [[String: Any]] ?? [] {
            let name = sample["name"] as? String ?? ""
            let labels = sample["labels"] as? [String: String] ?? [:]
            parsed.samples[Parsed.key(name, labels)] = (sample["value"] as? NSNumber)?.doubleValue
        }
        for (name, family) in object?["families"] as? [String: [String: String]] ?? [:] {
            parsed.types[name] = family["type"]
        }
        return parsed
    }

    private func configure(_ fixture: ServiceFixture, url: String) throws -> String {
        try fixture.tmp.mkdir("metrics")
        try fixture.writeConfig(url: url, global: "metrics_file = metrics/uploader.prom")
        return fixture.tmp.path("metrics/uploader.prom")
    }

    @Test func metricsOfAnOfflineProfileMatchTheSpool() throws {
        let fixture = try ServiceFixture()
        let metrics = try configure(fixture, url: try refusedURL())
        let old = try fixture.drop("a.bin", Data(repeating: 1, count: 100))
        try fixture.age(old, seconds: 600)
        try fixture.drop("b.bin", Data(repeating: 2, count: 200))
        try fixture.layOut("retry", "c.bin", size: 30, state: "retry", nextAttemptAt: "2030-01-01T00:00:00.000Z", attempts: 1)
        try fixture.layOut("retry", "d.bin", size: 40, state: "failed", attempts: 1)

        let daemon = try fixture.startDaemon()
        try waitUntil(timeout: 10, "the metrics file") { FileManager.default.fileExists(atPath: metrics) }
        let running = try Self.parse(metrics)
        #expect(running.types["uploader_files"] == "counter")
        #expect(running.types["uploader_queue_files"] == "gauge")
        #expect(running.types["uploader_upload_duration_seconds"] == "histogram")
        try waitUntil(timeout: 15, "the profile to go offline") { daemon.stderrText().contains("destination unreachable") }
        // Rewritten every 10 s: the running daemon's file names why it is paused.
        try waitUntil(timeout: 15, poll: 0.5, "the metrics to say paused offline") {
            try Self.parse(metrics)["uploader_paused", ["profile": "p", "reason": "offline"]] == 1
        }
        let paused = try Self.parse(metrics)
        #expect(paused["uploader_paused", ["profile": "p", "reason": "outside_window"]] == 0)
        #expect(paused["uploader_paused", ["profile": "p", "reason": "interface"]] == 0)
        #expect(try stopDaemon(daemon).exitCode == 0)

        let m = try Self.parse(metrics)
        let p = ["profile": "p"]
        for result in ["sent", "retry", "failed"] {
            #expect(m["uploader_files_total", ["profile": "p", "result": result]] == 0, "\(result)")
        }
        #expect(m["uploader_bytes_sent_total", p] == 0)
        #expect(m["uploader_queue_files", ["profile": "p", "state": "queued"]] == 2)
        #expect(m["uploader_queue_files", ["profile": "p", "state": "uploading"]] == 0)
        #expect(m["uploader_queue_files", ["profile": "p", "state": "retry"]] == 1)
        #expect(m["uploader_queue_files", ["profile": "p", "state": "failed"]] == 1)
        #expect(m["uploader_queue_bytes", p] == 330)
        #expect(m["uploader_destination_up", p] == 0)
        let oldest = try #require(m["uploader_oldest_queued_seconds", p])
        #expect(oldest >= 600 && oldest < 700, "oldest \(oldest)")
        #expect(m["uploader_upload_duration_seconds_count", p] == 0)
        #expect(m["uploader_upload_duration_seconds_bucket", ["profile": "p", "le": "+Inf"]] == 0)
        let hidden = try FileManager.default.contentsOfDirectory(atPath: fixture.tmp.path("metrics"))
        #expect(hidden == ["uploader.prom"], "no temporary files left: \(hidden)")
    }

    @Test func metricsCountSentFilesBytesAndDurationsAndAreRewrittenWhileRunning() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        let metrics = try configure(fixture, url: sink.url("up/{path}"))
        let daemon = try fixture.startDaemon()
        try waitUntil(timeout: 10, "the first metrics file") { FileManager.default.fileExists(atPath: metrics) }
        for (index, size) in [1000, 2000, 3000].enumerated() {
            try fixture.drop("f\(index).bin", Data(repeating: UInt8(index), count: size))
        }
        try waitUntil(timeout: 15, "three files in sent/") {
            (0..<3).allSatisfy { fixture.exists("sent/f\($0).bin.manifest.json") }
        }
        // Rewritten every 10 s while running.
        try waitUntil(timeout: 15, poll: 0.5, "the running daemon's metrics to count three files") {
            try Self.parse(metrics)["uploader_files_total", ["profile": "p", "result": "sent"]] == 3
        }
        #expect(try stopDaemon(daemon).exitCode == 0)

        let m = try Self.parse(metrics)
        let p = ["profile": "p"]
        #expect(m["uploader_files_total", ["profile": "p", "result": "sent"]] == 3)
        #expect(m["uploader_files_total", ["profile": "p", "result": "retry"]] == 0)
        #expect(m["uploader_files_total", ["profile": "p", "result": "failed"]] == 0)
        #expect(m["uploader_bytes_sent_total", p] == 6000)
        for state in ["queued", "uploading", "retry", "failed"] {
            #expect(m["uploader_queue_files", ["profile": "p", "state": state]] == 0, "\(state)")
        }
        #expect(m["uploader_queue_bytes", p] == 0)
        #expect(m["uploader_destination_up", p] == 1)
        for reason in ["offline", "outside_window", "interface"] {
            #expect(m["uploader_paused", ["profile": "p", "reason": reason]] == 0, "\(reason)")
        }
        #expect(m["uploader_oldest_queued_seconds", p] == 0)
        #expect(m["uploader_upload_duration_seconds_count", p] == 3)
        #expect(m["uploader_upload_duration_seconds_bucket", ["profile": "p", "le": "+Inf"]] == 3)
        #expect(m["uploader_upload_duration_seconds_bucket", ["profile": "p", "le": "1800"]] == 3)
        #expect((m["uploader_upload_duration_seconds_sum", p] ?? 0) > 0)
    }
}
