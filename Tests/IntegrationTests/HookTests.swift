@preconcurrency import Glibc
import Foundation
import Testing

/// `on_sent` / `on_failed`: run without a shell, with final paths and UPLOADER_* variables,
/// never holding up uploads, killed at `hook_timeout`.
@Suite struct HookTests {
    /// A hook that writes its arguments, directory, variables and blocked signals to
    /// `hooks/out-NAME.txt` (NAME: the file's name), then exits with `exitCode`.
    private func recordingHook(_ fixture: ServiceFixture, exitCode: Int = 0) throws -> String {
        let path = try fixture.tmp.write("hooks/record.sh", """
            #!/bin/sh
            out="$(dirname "$0")/out-$(basename "$1").txt"
            {
                echo "argc=$#"
                echo "arg1=$1"
                echo "arg2=$2"
                echo "pwd=$(pwd)"
                for v in UPLOADER_PROFILE UPLOADER_ID UPLOADER_FILE UPLOADER_MANIFEST UPLOADER_STATE UPLOADER_HTTP_STATUS; do
                    eval "echo \\"$v=\\${$v}\\""
                done
                grep '^SigBlk:' /proc/self/status | tr -d '\\t'
            } > "$out.tmp"
            mv "$out.tmp" "$out"
            exit \(exitCode)

            """)
        chmod(path, 0o755)
        return path
    }

    private func record(_ fixture: ServiceFixture, _ name: String) throws -> [String: String] {
        let text = try String(contentsOfFile: fixture.tmp.path("hooks/out-\(name).txt"), encoding: .utf8)
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") ?? line.firstIndex(of: ":") else { continue }
            fields[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        return fields
    }

    @Test func onSentReceivesTheFinalPathsAndEnvironment() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        let hook = try recordingHook(fixture)
        try fixture.writeConfig(url: sink.url("up/{path}"), extra: "on_sent = \(hook)")
        let daemon = try fixture.startDaemon()
        try fixture.drop("report.pdf", Data("pdf\n".utf8))
        try waitUntil(timeout: 15, "the on_sent hook to run") {
            FileManager.default.fileExists(atPath: fixture.tmp.path("hooks/out-report.pdf.txt"))
        }
        let r = try record(fixture, "report.pdf")
        let manifest = try fixture.manifest("sent", "report.pdf")
        #expect(r["argc"] == "2")
        #expect(r["arg1"] == fixture.sentDirectory + "/report.pdf")
        #expect(r["arg2"] == fixture.sentDirectory + "/report.pdf.manifest.json")
        #expect(r["pwd"] == fixture.spool)
        #expect(r["UPLOADER_PROFILE"] == "p")
        #expect(r["UPLOADER_ID"] == manifest["id"] as? String)
        #expect(r["UPLOADER_FILE"] == fixture.sentDirectory + "/report.pdf")
        #expect(r["UPLOADER_MANIFEST"] == fixture.sentDirectory + "/report.pdf.manifest.json")
        #expect(r["UPLOADER_STATE"] == "sent")
        #expect(r["UPLOADER_HTTP_STATUS"] == "201")
        let blocked = UInt64(r["SigBlk"] ?? "", radix: 16)
        #expect(blocked.map { $0 & 0x7fff_ffff == 0 } == true, "the hook starts with no blocked signals: \(r["SigBlk"] ?? "?")")
        #expect(try stopDaemon(daemon).exitCode == 0)
    }

    @Test func onFailedRunsForAPermanentFailureAndItsExitStatusIsOnlyLogged() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        let hook = try recordingHook(fixture, exitCode: 3)
        // nginx answers a POST to a file it does not have with 404: a permanent failure.
        try fixture.writeConfig(url: sink.url("up/{path}"), extra: "method = POST\non_failed = \(hook)\non_sent = /bin/false")
        let daemon = try fixture.startDaemon()
        try fixture.drop("bad.txt", Data("x\n".utf8))
        try waitUntil(timeout: 15, "the on_failed hook to run") {
            FileManager.default.fileExists(atPath: fixture.tmp.path("hooks/out-bad.txt.txt"))
        }
        let r = try record(fixture, "bad.txt")
        #expect(r["arg1"] == fixture.retryDirectory + "/bad.txt")
        #expect(r["arg2"] == fixture.retryDirectory + "/bad.txt.manifest.json")
        #expect(r["UPLOADER_STATE"] == "failed")
        #expect(r["UPLOADER_HTTP_STATUS"] == "404")
        try waitUntil(timeout: 10, "the hook's exit status to be logged") {
            daemon.stderrText().contains("hook failed") && daemon.stderrText().contains("exit 3")
        }
        #expect(try fixture.manifest("retry", "bad.txt")["state"] as? String == "failed", "a failing hook changes nothing")
        #expect(try stopDaemon(daemon).exitCode == 0)
    }

    @Test func aHangingHookIsKilledAtItsTimeoutWhileUploadsContinue() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        let hook = try fixture.tmp.write("hooks/hang.sh", """
            #!/bin/sh
            sleep 300 &
            echo $! > "$(dirname "$0")/sleeper-$(basename "$1").pid"
            wait

            """)
        chmod(hook, 0o755)
        try fixture.writeConfig(url: sink.url("up/{path}"), extra: "on_sent = \(hook)\nhook_timeout = 3s")
        let daemon = try fixture.startDaemon()
        try fixture.drop("one.txt", Data("1\n".utf8))
        let pidFile = fixture.tmp.path("hooks/sleeper-one.txt.pid")
        let sleeper: pid_t = try waitFor(timeout: 15, "the hanging hook to start") {
            (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let hangStarted = Date()

        try fixture.drop("two.txt", Data("2\n".utf8))
        try fixture.drop("three.txt", Data("3\n".utf8))
        try waitUntil(timeout: 15, "two and three uploaded while the hook hangs") {
            fixture.exists("sent/two.txt.manifest.json") && fixture.exists("sent/three.txt.manifest.json")
        }
        #expect(Date().timeIntervalSince(hangStarted) < 3, "uploads were held up by the hook")
        #expect(Self.isAlive(sleeper), "the hook is still within its timeout")

        try waitUntil(timeout: 10, "the hook's whole process group to be killed") { !Self.isAlive(sleeper) }
        #expect(Date().timeIntervalSince(hangStarted) >= 2.5)
        try waitUntil(timeout: 5, "the timeout to be logged") { daemon.stderrText().contains("timed out; killed") }
        #expect(try fixture.manifest("sent", "one.txt")["state"] as? String == "sent")
        #expect(try stopDaemon(daemon).exitCode == 0)
        // The hooks of two and three were still hanging: exiting kills them too.
        for name in ["two.txt", "three.txt"] {
            guard let text = try? String(contentsOfFile: fixture.tmp.path("hooks/sleeper-\(name).pid"), encoding: .utf8),
                  let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { continue }
            try waitUntil(timeout: 5, "the hook of \(name) to be killed at exit") { !Self.isAlive(pid) }
        }
    }

    @Test func runOnceWaitsForItsLastHookBeforeExiting() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        let hook = try fixture.tmp.write("hooks/slow.sh", """
            #!/bin/sh
            sleep 1
            echo done > "$(dirname "$0")/slow-done.txt"

            """)
        chmod(hook, 0o755)
        try fixture.writeConfig(url: sink.url("up/{path}"), extra: "on_sent = \(hook)\nhook_timeout = 10s")
        try fixture.drop("last.txt", Data("z\n".utf8))
        let result = try fixture.run(["run", "--once"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(FileManager.default.fileExists(atPath: fixture.tmp.path("hooks/slow-done.txt")), "the hook finished before exit")
    }

    /// Running, and not a zombie waiting for a parent that may never reap it.
    static func isAlive(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }
}
