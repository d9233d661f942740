@preconcurrency import Glibc
import Foundation
import Testing

/// SIGHUP: a valid new config applies, a broken one is reported with its line and the old one stays.
@Suite struct ReloadTests {
    @Test func sighupWithAChangedURLSendsNewUploadsToTheNewURL() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: sink.url("first/{path}"))
        let daemon = try fixture.startDaemon()
        try fixture.drop("a.txt", Data("a\n".utf8))
        try waitUntil(timeout: 15, "a.txt at the first URL") { FileManager.default.fileExists(atPath: sink.file("first/a.txt")) }

        try fixture.writeConfig(url: sink.url("second/{path}"))
        daemon.send(SIGHUP)
        try waitUntil(timeout: 15, "the reload to be logged") { daemon.stderrText().contains("configuration reloaded") }
        #expect(daemon.stderrText().contains("restarted=p"), "\(daemon.stderrText())")

        try fixture.drop("b.txt", Data("b\n".utf8))
        try waitUntil(timeout: 15, "b.txt at the second URL") { FileManager.default.fileExists(atPath: sink.file("second/b.txt")) }
        #expect(!FileManager.default.fileExists(atPath: sink.file("first/b.txt")))
        #expect(daemon.isRunning)
        #expect(try stopDaemon(daemon).exitCode == 0)
    }

    @Test func sighupWithABrokenConfigLogsPathAndLineAndKeepsTheOldConfig() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: sink.url("first/{path}"))
        let daemon = try fixture.startDaemon()

        // Line 9 of the file ServiceFixture.writeConfig writes is the first `extra` line.
        try fixture.writeConfig(url: sink.url("second/{path}"), extra: "concurency = 4")
        daemon.send(SIGHUP)
        let expected = "\(fixture.configPath):9: unknown key \"concurency\" in [outbox p]; did you mean \"concurrency\"?"
        try waitUntil(timeout: 15, "the config error to be logged") { daemon.stderrText().contains(expected) }
        try waitUntil(timeout: 5, "the refusal to be logged") { daemon.stderrText().contains("configuration not reloaded") }

        try fixture.drop("c.txt", Data("c\n".utf8))
        try waitUntil(timeout: 15, "c.txt at the old URL") { FileManager.default.fileExists(atPath: sink.file("first/c.txt")) }
        #expect(!FileManager.default.fileExists(atPath: sink.file("second/c.txt")))
        #expect(try stopDaemon(daemon).exitCode == 0)
    }

    @Test func sighupStartsAnAddedProfileAndStopsARemovedOne() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: sink.url("p/{path}"))
        let daemon = try fixture.startDaemon()

        let second = "\n[outbox q]\nspool = spool-q\nurl = \(sink.url("q/{path}"))\n"
        try fixture.writeConfig(url: sink.url("p/{path}"), extra: second)
        daemon.send(SIGHUP)
        try waitUntil(timeout: 15, "the reload to start q") { daemon.stderrText().contains("started=q") }
        try FileManager.default.createDirectory(atPath: fixture.tmp.path("spool-q/outbox"), withIntermediateDirectories: true)
        try fixture.tmp.write("spool-q/outbox/q.txt", "q\n")
        try waitUntil(timeout: 15, "q.txt uploaded by the new profile") { FileManager.default.fileExists(atPath: sink.file("q/q.txt")) }

        // Now only q: p stops and lets go of its lock.
        try fixture.tmp.write("uploader.conf", "[outbox q]\nspool = spool-q\nurl = \(sink.url("q/{path}"))\n")
        daemon.send(SIGHUP)
        try waitUntil(timeout: 15, "the reload to stop p") { daemon.stderrText().contains("stopped=p") }
        let lock = try ProcessRunner.run(["flock", "--nonblock", fixture.spool + "/.lock", "true"])
        #expect(lock.exitCode == 0, "p's lock is free after its profile was removed: \(lock)")
        #expect(try stopDaemon(daemon).exitCode == 0)
    }
}
