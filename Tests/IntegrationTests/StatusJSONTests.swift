import Foundation
import Testing

/// `uploader status --json` against spools laid out by the test, with and without a daemon.
@Suite struct StatusJSONTests {
    /// `code`: 0 when nothing needs an operator, 2 with files failed for good.
    private func status(_ fixture: ServiceFixture, code: Int32 = 0) throws -> [String: Any] {
        let result = try fixture.run(["status", "--json"])
        #expect(result.exitCode == code, "\(result)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let profiles = object?["profiles"] as? [String: Any]
        return try #require(profiles?["p"] as? [String: Any], "no profile p in \(result.stdout)")
    }

    private func tally(_ p: [String: Any], _ key: String) -> [Int] {
        let t = p[key] as? [String: Any]
        return [t?["files"] as? Int ?? -1, t?["bytes"] as? Int ?? -1]
    }

    @Test func statusWithoutADaemonCountsEveryStateFromTheSpool() throws {
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: "http://127.0.0.1:1/{path}")
        try fixture.layOut("outbox", "b.bin", size: 250, state: "uploading")
        try FileManager.default.createDirectory(atPath: fixture.outbox, withIntermediateDirectories: true)
        let queued = try fixture.drop("a.bin", Data(repeating: 1, count: 100))
        try fixture.age(queued, seconds: 120)
        try fixture.layOut("retry", "c.bin", size: 30, state: "retry", nextAttemptAt: "2030-01-01T00:00:00.000Z",
                           lastError: "HTTP 503 Service Unavailable", attempts: 1)
        try fixture.layOut("retry", "d.bin", size: 40, state: "failed", attempts: 1)
        // sent_24h counts deliveries from the sent ledger, never files in sent/ (this one is there by hand).
        try fixture.layOut("sent", "e.bin", size: 7, state: "sent", attempts: 1)
        let sentAt = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
        try Data("\(sentAt) 9\n".utf8).write(to: URL(fileURLWithPath: fixture.spool + "/.sent-ledger"))

        let p = try status(fixture, code: 2)
        #expect(tally(p, "queued") == [1, 100])
        #expect(tally(p, "uploading") == [1, 250])
        #expect(tally(p, "retry") == [1, 30])
        #expect((p["retry"] as? [String: Any])?["next_due"] as? String == "2030-01-01T00:00:00.000Z")
        #expect(tally(p, "failed") == [1, 40])
        #expect(tally(p, "sent_24h") == [1, 9])
        #expect((p["refused"] as? [String: Any])?["files"] as? Int == 0)
        let oldest = try #require(p["oldest_queued_seconds"] as? Double)
        #expect(oldest >= 119 && oldest < 300, "oldest_queued_seconds \(oldest)")
        #expect(p["last_error"] as? String == "HTTP 503 Service Unavailable")
        #expect(p["reachable"] is NSNull)
        #expect(p["daemon_pid"] is NSNull)
    }

    @Test func statusOfAnEmptySpoolWithoutADaemonIsAllZerosAndNulls() throws {
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: "http://127.0.0.1:1/{path}")
        for area in ["outbox", "sent", "retry"] {
            try FileManager.default.createDirectory(atPath: fixture.spool + "/" + area, withIntermediateDirectories: true)
        }
        let p = try status(fixture)
        for key in ["queued", "uploading", "retry", "failed", "sent_24h"] { #expect(tally(p, key) == [0, 0], "\(key)") }
        #expect(p["oldest_queued_seconds"] is NSNull)
        #expect((p["retry"] as? [String: Any])?["next_due"] is NSNull)
        #expect(p["last_error"] is NSNull)
        #expect(p["reachable"] is NSNull)
        #expect(p["daemon_pid"] is NSNull)
    }

    @Test func statusWithARunningDaemonShowsItsPidAndAReachableDestination() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: sink.url("up/{path}"))
        let daemon = try fixture.startDaemon()
        try fixture.drop("one.bin", Data(repeating: 2, count: 1234))
        try waitUntil(timeout: 15, "one.bin to reach sent/") { fixture.exists("sent/one.bin.manifest.json") }

        let p = try status(fixture)
        #expect(p["daemon_pid"] as? Int == Int(daemon.pid))
        #expect(p["reachable"] as? Bool == true)
        #expect(p["last_error"] is NSNull)
        #expect(tally(p, "sent_24h") == [1, 1234])
        #expect(tally(p, "queued") == [0, 0])
        #expect(try stopDaemon(daemon).exitCode == 0)

        let after = try status(fixture)
        #expect(after["daemon_pid"] is NSNull, "a stopped daemon is not reported")
        #expect(after["reachable"] is NSNull)
    }

    @Test func statusWithADaemonWhoseDestinationIsDownSaysUnreachableAndWhy() throws {
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: try refusedURL())
        let daemon = try fixture.startDaemon()
        try fixture.drop("waiting.bin", Data(repeating: 3, count: 500))
        var p: [String: Any] = [:]
        try waitUntil(timeout: 15, "status to report the destination unreachable") {
            p = try status(fixture)
            return p["reachable"] as? Bool == false
        }
        #expect(p["daemon_pid"] as? Int == Int(daemon.pid))
        #expect((p["last_error"] as? String)?.contains("onnect") == true, "last_error: \(String(describing: p["last_error"]))")
        #expect(tally(p, "queued") == [1, 500])
        #expect(try stopDaemon(daemon).exitCode == 0)
    }

    @Test func aNameTooLongForItsSidecarIsCountedAsRefusedWhileTheDaemonRuns() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: sink.url("up/{path}"))
        let daemon = try fixture.startDaemon()
        try fixture.drop(String(repeating: "n", count: 245) + ".bin", Data("x".utf8))
        try fixture.drop("fine.bin", Data("y".utf8))
        try waitUntil(timeout: 15, "fine.bin to be sent") { fixture.exists("sent/fine.bin.manifest.json") }
        var p: [String: Any] = [:]
        try waitUntil(timeout: 10, "status to count the refused name") {
            p = try status(fixture)
            return (p["refused"] as? [String: Any])?["files"] as? Int == 1
        }
        #expect(tally(p, "queued") == [0, 0], "a refused file is counted as refused, not queued")
        #expect(fixture.exists("outbox/" + String(repeating: "n", count: 245) + ".bin"), "the refused file stays in the outbox")
        #expect(try stopDaemon(daemon).exitCode == 0)
    }
}
