import Foundation
import Testing

/// What `run` writes to stderr: a summary line at the end of `--once`, JSON lines when asked.
@Suite struct RunLogTests {
    @Test func runOnceEndsWithASummaryLineInJSON() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: sink.url("up/{path}"), global: "log_format = json")
        try fixture.drop("a.txt", Data("a\n".utf8))
        try fixture.drop("b.txt", Data("bb\n".utf8))
        let result = try fixture.run(["run", "--once"])
        #expect(result.exitCode == 0, "\(result)")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        let objects = try lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
        }
        let sent = objects.filter { $0["msg"] as? String == "sent" }
        #expect(sent.count == 2)
        #expect(sent.allSatisfy { $0["profile"] as? String == "p" && $0["http.status"] as? String == "201" })
        let summary = try #require(objects.last)
        #expect(summary["msg"] as? String == "run --once finished")
        #expect(summary["sent"] as? String == "2")
        #expect(summary["retry"] as? String == "0")
        #expect(summary["failed"] as? String == "0")
    }

    @Test func runOnceWithAnUnreachableDestinationExits69AndSaysSo() throws {
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: try refusedURL())
        try fixture.drop("a.txt", Data("a\n".utf8))
        let result = try fixture.run(["run", "--once"])
        #expect(result.exitCode == 69, "\(result)")
        let last = result.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.contains("run --once finished") && last.contains("left_queued_offline=yes"), "\(last)")
        #expect(fixture.exists("outbox/a.txt"))
    }

    @Test func aLongUploadLogsItsProgressEveryTenSeconds() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        // 3 MiB at 192 KiB/s: 16 s, so one progress line at 10 s.
        try fixture.writeConfig(url: sink.url("up/{path}"), extra: "max_rate = 192KiB\nshutdown_grace = 1s")
        let daemon = try fixture.startDaemon()
        try fixture.drop("long.bin", Data(repeating: 9, count: 3 << 20))
        let line: String = try waitFor(timeout: 20, poll: 0.2, "a progress line") {
            daemon.stderrText().split(separator: "\n").first { $0.contains(" uploading ") && $0.contains("percent=") }.map(String.init)
        }
        #expect(line.contains("file=long.bin") && line.contains("rate=") && line.contains("eta="), "\(line)")
        let percent = line.split(separator: " ").first { $0.hasPrefix("percent=") }.flatMap { Double($0.dropFirst(8)) }
        #expect(percent.map { $0 > 40 && $0 < 90 } == true, "\(line)")
        #expect(try stopDaemon(daemon).exitCode == 0)
    }
}
