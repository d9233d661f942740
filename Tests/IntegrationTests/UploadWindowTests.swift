import Foundation
import Testing
@preconcurrency import Glibc

/// `upload_window` (#14): outside every window nothing starts; a reload with a window that
/// includes now delivers everything. Windows are built around the current time (UTC).
@Suite struct UploadWindowTests {
    @Test func runOnceOutsideItsWindowStartsNothingSaysWhenItOpensAndExitsZero() throws {
        let sink = try NginxSink()
        // One reading of the clock: the assertion below must name the same minute as the config,
        // even when the run crosses a minute's end.
        let opens = LocalMinutes.at(120)
        let window = "\(opens)-\(LocalMinutes.at(180))"
        let fx = try SpoolFixture(url: sink.url("w/{name}"), extra: "upload_window = \(window)")
        fx.environment = LocalMinutes.environment
        try fx.drop("a.txt", Data("a\n".utf8))
        let result = try fx.runOnce()
        #expect(result.exitCode == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n").filter { $0.contains("outside every upload window") }
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.contains("next_window_opens_at=") == true && lines.first?.contains("T\(opens):00") == true,
                "\(lines)")
        #expect(sink.accessLog().isEmpty)
        #expect(fx.files(in: fx.outbox) == ["a.txt"])
    }

    @Test func aWindowThatExcludesNowStartsNothingAndASighupWithOneThatIncludesNowDeliversEverything() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("w/{name}"), extra: "upload_window = \(LocalMinutes.at(120))-\(LocalMinutes.at(180))")
        fx.environment = LocalMinutes.environment
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        for i in 0..<3 { try fx.drop("f\(i).txt", Data("file \(i)\n".utf8)) }
        try waitUntil(timeout: 15, "status to say outside_window") {
            let status = try fx.run(["status", "--json"])
            return status.stdout.contains("\"paused_reason\": \"outside_window\"")
        }
        #expect(daemon.stderrText().contains("outside every upload window"))
        #expect(sink.accessLog().isEmpty, "nothing was sent")
        #expect(fx.names(in: fx.outbox) == ["f0.txt", "f1.txt", "f2.txt"], "not even claimed")

        try fx.rewrite(url: sink.url("w/{name}"), extra: "upload_window = \(LocalMinutes.at(-60))-\(LocalMinutes.at(60))")
        daemon.send(SIGHUP)
        try waitUntil(timeout: 20, "every file delivered") { fx.files(in: fx.sent) == ["f0.txt", "f1.txt", "f2.txt"] }
        try waitUntil(timeout: 15, "status to say nothing pauses it") {
            try fx.run(["status", "--json"]).stdout.contains("\"paused_reason\": null")
        }
        #expect(try stopDaemon(daemon).exitCode == 0)
    }
}
