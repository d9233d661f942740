@preconcurrency import Glibc
import Foundation
import Testing

/// `Type=notify`: the messages systemd would receive on `$NOTIFY_SOCKET`.
@Suite struct SystemdNotifyTests {
    @Test func daemonSendsReadyStatusWatchdogAndStoppingOnAPathSocket() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: sink.url("up/{path}"))
        let socket = try NotifySocket(path: fixture.tmp.path("notify.sock"))
        let daemon = try fixture.startDaemon(environment: ["NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "300000"])

        try waitUntil(timeout: 10, "READY=1 (got \(socket.lines))") { socket.lines.contains("READY=1") }
        let status = try #require(socket.lines.first { $0.hasPrefix("STATUS=") })
        #expect(status.contains("p: ") && status.contains("queued"), "\(status)")
        try waitUntil(timeout: 10, "WATCHDOG=1 every 150 ms") { socket.lines.filter { $0 == "WATCHDOG=1" }.count >= 3 }
        #expect(!socket.lines.contains("STOPPING=1"))

        // READY means watching: a file dropped right after it is uploaded.
        try fixture.drop("after-ready.txt", Data("ready\n".utf8))
        try waitUntil(timeout: 15, "after-ready.txt to reach sent/") { fixture.exists("sent/after-ready.txt") }

        #expect(try stopDaemon(daemon).exitCode == 0)
        let lines = socket.lines
        #expect(lines.contains("STOPPING=1"), "\(lines)")
        let ready = try #require(lines.firstIndex(of: "READY=1"))
        let stopping = try #require(lines.firstIndex(of: "STOPPING=1"))
        #expect(ready < stopping)
    }

    @Test func daemonReachesAnAbstractNamespaceSocket() throws {
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: try refusedURL())
        let socket = try NotifySocket(path: "@uploader-test-\(getpid())-\(UUID().uuidString.prefix(8))")
        let daemon = try fixture.startDaemon(environment: ["NOTIFY_SOCKET": socket.path])
        try waitUntil(timeout: 10, "READY=1 on \(socket.path)") { socket.lines.contains("READY=1") }
        #expect(!socket.lines.contains("WATCHDOG=1"), "no WATCHDOG_USEC, no watchdog pings")
        #expect(try stopDaemon(daemon).exitCode == 0)
        #expect(socket.lines.contains("STOPPING=1"))
    }

    @Test func runOnceSendsNothingToSystemd() throws {
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: try refusedURL())
        let socket = try NotifySocket(path: fixture.tmp.path("notify.sock"))
        let result = try fixture.run(["run", "--once"], environment: ["NOTIFY_SOCKET": socket.path])
        #expect(result.exitCode == 0, "\(result)")
        #expect(socket.messages.isEmpty, "\(socket.messages)")
    }
}
