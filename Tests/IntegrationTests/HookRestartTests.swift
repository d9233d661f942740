@preconcurrency import Glibc
import Foundation
import Testing

/// DESIGN §9: a hook runs at least once for every file that reaches sent/ or failed, even when the
/// daemon dies while it runs; the manifest records each run; a finished run never runs again, and
/// a manifest with no `hooks` key has none due.
@Suite struct HookRestartTests {
    /// A hook that appends `run PID` to `hooks/runs.txt`, then waits until `hooks/go` exists:
    /// woken by inotify when it is created (each wait bounded by 1 s, in case it came between the
    /// test and the watch), 30 s at most, so a test that fails never leaves a hook behind for ever.
    /// It exits 0 exactly when `go` exists: the loop's own status is that of its last
    /// `inotifywait`, 2 when `go` came just before the watch and that wait timed out.
    private func blockingHook(_ fixture: ServiceFixture) throws -> String {
        let path = try fixture.tmp.write("hooks/blocking.sh", """
            #!/bin/sh
            dir="$(dirname "$0")"
            echo "run $$ $1" >> "$dir/runs.txt"
            timeout 30 sh -c 'until [ -e "$1/go" ]; do inotifywait -qq -t 1 -e create -e moved_to "$1"; done' sh "$dir"
            [ -e "$dir/go" ]

            """)
        chmod(path, 0o755)
        return path
    }

    private func runs(_ fixture: ServiceFixture) -> [String] {
        ((try? String(contentsOfFile: fixture.tmp.path("hooks/runs.txt"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    private func hookRuns(_ fixture: ServiceFixture, _ area: String, _ name: String) throws -> [[String: Any]] {
        try fixture.manifest(area, name)["hooks"] as? [[String: Any]] ?? []
    }

    private func markers(_ fixture: ServiceFixture) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: fixture.spool + "/.hooks-due")) ?? []).sorted()
    }

    @Test func aHookCutByKill9RunsAgainAtStartAndNeverAThirdTime() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        let hook = try blockingHook(fixture)
        try fixture.writeConfig(url: sink.url("up/{path}"), extra: "on_sent = \(hook)\nhook_timeout = 120s")
        let first = try fixture.startDaemon()
        try fixture.drop("a.bin", Data(repeating: 5, count: 4096))
        try waitUntil(timeout: 15, "on_sent to start") { runs(fixture).count == 1 }
        let started = try hookRuns(fixture, "sent", "a.bin")
        #expect(started.count == 1 && started[0]["name"] as? String == "on_sent", "\(started)")
        #expect(started.first?["started_at"] is String && started.first?["ended_at"] is NSNull && started.first?["exit_status"] is NSNull)
        #expect(markers(fixture).count == 1, "the due hook has its marker: \(markers(fixture))")

        first.kill9()
        _ = try first.waitForExit(timeout: 10)
        // The first run's process outlives the daemon (a group of its own); it is not what we count.
        if let pid = runs(fixture).first?.split(separator: " ").dropFirst().first.flatMap({ pid_t($0) }) { kill(-pid, SIGKILL) }

        let second = try fixture.startDaemon()
        try waitUntil(timeout: 15, "on_sent to run again after the restart") { runs(fixture).count == 2 }
        #expect(second.stderrText().contains("running hooks left due"), "\(second.stderrText())")
        _ = try fixture.tmp.write("hooks/go", "")
        try waitUntil(timeout: 15, "the manifest to record a finished run") {
            (try hookRuns(fixture, "sent", "a.bin")).last?["ended_at"] is String
        }
        let recorded = try hookRuns(fixture, "sent", "a.bin")
        #expect(recorded.count == 2, "the cut run, then the run again: \(recorded)")
        #expect(recorded.first?["ended_at"] is NSNull, "the run cut by kill -9 has no end: \(recorded)")
        #expect(recorded.last?["exit_status"] as? Int == 0 && recorded.last?["started_at"] is String, "\(recorded)")
        try waitUntil(timeout: 5, "the marker to go") { markers(fixture).isEmpty }
        #expect(try stopDaemon(second).exitCode == 0)

        let third = try fixture.startDaemon()
        #expect(try stopDaemon(third).exitCode == 0, "stopping waits for queued hooks")
        #expect(runs(fixture).count == 2, "a finished run never runs again: \(runs(fixture))")
        #expect(!third.stderrText().contains("running hooks left due"))
        #expect(try hookRuns(fixture, "sent", "a.bin").count == 2)
    }

    @Test func aManifestWithoutHooksHasNoneDueSoAnUpgradeReplaysNothing() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        try fixture.layOut("sent", "old.bin", size: 10, state: "sent", attempts: 1)
        try fixture.writeConfig(url: sink.url("up/{path}"))
        try fixture.drop("new.bin", Data("n".utf8))
        #expect(try fixture.run(["run", "--once"]).exitCode == 0)
        #expect(try fixture.manifest("sent", "new.bin")["hooks"] == nil, "no hook configured: no hooks key")

        let hook = try blockingHook(fixture)
        _ = try fixture.tmp.write("hooks/go", "")
        try fixture.writeConfig(url: sink.url("up/{path}"), extra: "on_sent = \(hook)")
        try fixture.drop("newer.bin", Data("m".utf8))
        #expect(try fixture.run(["run", "--once"]).exitCode == 0)
        #expect(runs(fixture).map { $0.hasSuffix("/sent/newer.bin") } == [true], "only the file sent with the hook: \(runs(fixture))")
        let recorded = try hookRuns(fixture, "sent", "newer.bin")
        #expect(recorded.count == 1 && recorded[0]["exit_status"] as? Int == 0, "\(recorded)")
        #expect(markers(fixture).isEmpty)
    }

    @Test func aFailingHookIsRecordedWithItsExitStatusAndNotRunAgain() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        let hook = try fixture.tmp.write("hooks/fail.sh", "#!/bin/sh\necho \"$1\" >> \"$(dirname \"$0\")/runs.txt\"\nexit 3\n")
        chmod(hook, 0o755)
        // nginx answers a POST to a file it does not have with 404: a permanent failure.
        try fixture.writeConfig(url: sink.url("up/{path}"), extra: "method = POST\non_failed = \(hook)")
        try fixture.drop("bad.txt", Data("x\n".utf8))
        #expect(try fixture.run(["run", "--once"]).exitCode == 1)
        let recorded = try hookRuns(fixture, "retry", "bad.txt")
        #expect(recorded.count == 1 && recorded[0]["name"] as? String == "on_failed" && recorded[0]["exit_status"] as? Int == 3, "\(recorded)")
        #expect(try fixture.run(["run", "--once"]).exitCode == 0)
        #expect(runs(fixture).count == 1, "a failed run is a finished run: \(runs(fixture))")
    }
}
