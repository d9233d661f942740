@preconcurrency import Glibc
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
        #expect(sent.allSatisfy { $0["profile"] as? String == "p" && $0["http_status"] as? Int == 201 })
        let summary = try #require(objects.last)
        #expect(summary["msg"] as? String == "run --once finished")
        #expect(summary["sent"] as? Int == 2)
        #expect(summary["retry"] as? Int == 0)
        #expect(summary["failed"] as? Int == 0)
    }

    /// Every line a daemon logging JSON writes parses, numbers typed: start-up failures before
    /// the logger exists (a broken config) and after (a lock held), uploads, and a failing
    /// hook's own output.
    @Test func everyLineOfADaemonLoggingJSONIsOneObjectWithTypedNumbers() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        let hook = try fixture.tmp.write("hooks/noisy.sh", "#!/bin/sh\necho \"to stdout: $(basename \"$1\")\"\necho 'to stderr' >&2\nexit 3\n")
        chmod(hook, 0o755)
        try fixture.writeConfig(url: sink.url("up/{path}"), extra: "concurency = 4", global: "log_format = json")
        let broken = try fixture.run(["run", "--once"])
        #expect(broken.exitCode == 78, "\(broken)")
        let brokenLines = try Self.objects(broken.stderr)
        #expect(brokenLines.count == 1 && brokenLines[0]["level"] as? String == "error"
                && (brokenLines[0]["msg"] as? String)?.contains(":9: unknown key \"concurency\"") == true, "\(brokenLines)")

        try fixture.writeConfig(url: sink.url("up/{path}"), extra: "on_sent = \(hook)", global: "log_format = json")
        let daemon = try fixture.startDaemon()
        let second = try fixture.run(["run", "--once"])
        #expect(second.exitCode == 75, "\(second)")
        let held = try Self.objects(second.stderr)
        #expect(held.contains { $0["level"] as? String == "error" && ($0["msg"] as? String)?.contains("not starting") == true }, "\(held)")

        try fixture.drop("a.bin", Data(repeating: 7, count: 48213))
        try waitUntil(timeout: 15, "the hook's failure to be logged") { daemon.stderrText().contains("hook failed") }
        #expect(try stopDaemon(daemon).exitCode == 0)
        let objects = try Self.objects(daemon.stderrText())
        let sent = try #require(objects.first { $0["msg"] as? String == "sent" }, "\(objects)")
        #expect(sent["bytes"] as? Int == 48213 && sent["http_status"] as? Int == 201, "\(sent)")
        #expect(sent["duration_s"] is NSNumber && !(sent["duration_s"] is String), "\(sent)")
        let failed = try #require(objects.first { $0["msg"] as? String == "hook failed; the file's state is unchanged" })
        #expect(failed["exit_status"] as? Int == 3 && failed["hook"] as? String == "on_sent", "\(failed)")
        #expect(failed["output"] as? String == "to stdout: a.bin\nto stderr", "\(failed)")
        #expect(failed["duration_s"] is NSNumber, "\(failed)")
        #expect(!daemon.stderrText().contains("\nto stderr\n"), "hook output is no line of its own")
    }

    /// Each line of `text` as a JSON object; throws naming the first that is not one.
    static func objects(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            try #require(try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
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
        #expect(line.contains("file=long.bin") && line.contains("rate=") && line.contains("eta_s="), "\(line)")
        let percent = line.split(separator: " ").first { $0.hasPrefix("percent=") }.flatMap { Double($0.dropFirst(8)) }
        #expect(percent.map { $0 > 40 && $0 < 90 } == true, "\(line)")
        #expect(try stopDaemon(daemon).exitCode == 0)
    }
}
