@preconcurrency import Glibc
import Foundation
import Testing

/// SIGTERM while an upload is in flight: exit 0 within the grace, the file stays queued.
@Suite struct ShutdownTests {
    @Test func sigtermDuringASlowUploadExitsZeroWithinTheGraceAndLeavesTheFileQueued() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        // 4 MiB at 128 KiB/s takes half a minute: still in flight when SIGTERM comes.
        try fixture.writeConfig(url: sink.url("up/{path}"), extra: "max_rate = 128KiB\nshutdown_grace = 1s")
        let daemon = try fixture.startDaemon()
        try fixture.drop("slow.bin", Data(repeating: 7, count: 4 << 20))
        try waitUntil(timeout: 15, "the upload to start") {
            (try? fixture.manifest("outbox", "slow.bin"))?["state"] as? String == "uploading"
        }

        let signalled = Date()
        daemon.terminate()
        let result = try daemon.waitForExit(timeout: 10)
        let took = Date().timeIntervalSince(signalled)
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(took < 5, "exited \(took)s after SIGTERM with a 1 s grace")

        #expect(fixture.exists("outbox/slow.bin"))
        let manifest = try fixture.manifest("outbox", "slow.bin")
        #expect(manifest["state"] as? String == "queued")
        let attempts = try #require(manifest["attempts"] as? [[String: Any]])
        #expect(attempts.count == 1)
        #expect(attempts.first?["interrupted"] as? Bool == true, "the cut attempt is marked interrupted: \(attempts)")
        #expect(attempts.filter { $0["interrupted"] as? Bool != true }.isEmpty, "no attempt counted")
        #expect(!fixture.exists("sent/slow.bin") && !fixture.exists("retry/slow.bin"))
        #expect(result.stderr.contains("shutdown grace over"), "\(result.stderr)")
    }
}
