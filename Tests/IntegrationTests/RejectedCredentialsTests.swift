@preconcurrency import Glibc
import Foundation
import XCTest
@testable import UploaderSupport
@testable import UploaderSpool

/// DESIGN §12 "Rejected" on the built binary: a token the server refuses pauses the profile after
/// a few files, fails none, and everything arrives once the server takes us again — by itself
/// after the backoff, at once when the token file is rewritten, or at once on SIGHUP.
final class RejectedCredentialsTests: XCTestCase {
    /// A fixture sending `auth = bearer` with the token in `token`, and `count` files dropped
    /// before the daemon starts (a backlog); returns the SHA-256 of each file by name.
    private func backlog(_ server: FaultServer, count: Int, token: String, concurrency: Int = 2, extra: String = "",
                         logLevel: String = "info") throws -> (SpoolFixture, [String: String]) {
        let fx = try SpoolFixture(url: server.url("{name}"), extra: """
            auth = bearer
            token_file = token
            concurrency = \(concurrency)
            \(extra)
            """, global: "log_level = \(logLevel)\nmetrics_file = uploader.prom")
        _ = try fx.tmp.write("token", token + "\n")
        var hashes: [String: String] = [:]
        for i in 0..<count {
            let data = Data((0..<(4096 + i * 777)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) })
            try fx.drop("f\(i).bin", data)
            hashes["f\(i).bin"] = sha256(of: data)
        }
        return (fx, hashes)
    }

    private func status(_ fx: SpoolFixture) throws -> [String: Any] {
        let result = try fx.run(["status", "--json"])
        // 3: paused until an operator acts; 0 otherwise.
        guard [0, 3].contains(result.exitCode), let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
              let profiles = object["profiles"] as? [String: Any], let profile = profiles[fx.profile] as? [String: Any] else {
            throw HarnessError("status --json: \(result)")
        }
        return profile
    }

    /// Waits for the pause and checks what the operator sees then: status, the log line, the
    /// metric (written every 10 s: looked at once), and a spool where nothing failed and only a
    /// few files were touched.
    private func expectPaused(_ fx: SpoolFixture, _ daemon: RunningProcess, files: Int, status code: Int,
                              metrics: Bool = false) throws {
        let paused = try waitFor(timeout: 15, "status --json to say paused_reason rejected") {
            let s = try status(fx)
            return s["paused_reason"] as? String == "rejected" ? s : nil
        }
        let lastError = paused["last_error"] as? String ?? ""
        XCTAssertTrue(lastError.contains("HTTP \(code)"), "last_error: \(lastError)")
        let plainResult = try fx.run(["status"])
        let plain = plainResult.stdout
        XCTAssertEqual(plainResult.exitCode, 3, "paused until an operator acts: \(plainResult)")
        XCTAssertTrue(plain.contains("paused      rejected: credentials refused"), plain)
        XCTAssertTrue(plain.contains("ATTENTION   paused: rejected"), plain)
        let check = try fx.run(["status", "--check"])
        XCTAssertEqual(check.exitCode, 2, "CRITICAL: \(check)")
        XCTAssertTrue(check.stdout.hasPrefix("UPLOADER CRITICAL - paused: rejected: credentials refused"), check.stdout)
        XCTAssertTrue(plain.contains("last error  HTTP \(code)"), plain)
        XCTAssertEqual(daemon.stderrText().components(separatedBy: "destination refuses our credentials; profile paused").count - 1, 1,
                       daemon.stderrText())

        XCTAssertEqual(fx.files(in: fx.retry), [], "no file failed for a \(code)")
        XCTAssertEqual(fx.files(in: fx.sent), [])
        XCTAssertEqual(fx.files(in: fx.outbox).count, files, "every file still queued")
        var touched = 0
        for name in fx.files(in: fx.outbox) {
            guard let manifest = try? fx.manifest(name, in: fx.outbox), !manifest.attempts.isEmpty else { continue }
            touched += 1
            XCTAssertEqual(manifest.state, .queued, name)
            XCTAssertEqual(manifest.countedAttempts, 0, "\(name): a refused attempt does not count")
            XCTAssertTrue(manifest.attempts.allSatisfy { $0.rejected == true && $0.httpStatus == code }, "\(name): \(manifest.attempts)")
        }
        XCTAssertGreaterThanOrEqual(touched, 3)
        XCTAssertLessThanOrEqual(touched, 5, "three refusals and what was in flight, not the backlog")

        guard metrics else { return }
        let file = fx.tmp.path("uploader.prom")
        try waitUntil(timeout: 15, "the metrics file to say paused rejected") {
            let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            return text.contains("uploader_paused{profile=\"\(fx.profile)\",reason=\"rejected\"} 1")
                && text.contains("uploader_paused{profile=\"\(fx.profile)\",reason=\"offline\"} 0")
        }
    }

    /// Every file in sent/, each with exactly its bytes as the server accepted them, one counted attempt.
    private func expectAllDelivered(_ fx: SpoolFixture, _ server: FaultServer, _ hashes: [String: String], timeout: TimeInterval) throws {
        // A move links into sent/ before it unlinks from the outbox: wait for both ends.
        try waitUntil(timeout: timeout, "every file in sent/ and none left in the outbox") {
            Set(fx.files(in: fx.sent)) == Set(hashes.keys) && fx.files(in: fx.outbox).isEmpty
        }
        XCTAssertEqual(fx.files(in: fx.retry), [])
        let accepted = try server.recorded().filter { !$0.refusedCredentials && $0.method == "PUT" }
        for (name, hash) in hashes {
            let bodies = accepted.filter { $0.path == "/" + name }.map(\.bodySHA256)
            XCTAssertEqual(bodies, [hash], "\(name): the bytes the server accepted are the bytes dropped")
            XCTAssertEqual(try fx.manifest(name, in: fx.sent).countedAttempts, 1, name)
        }
        try waitUntil(timeout: 5, "status --json to say paused_reason null") { try status(fx)["paused_reason"] is NSNull }
    }

    func testRevokedTokenPausesTheProfileAndEverythingArrivesOnceTheServerTakesItAgain() throws {
        let server = try FaultServer()
        try server.refuseCredentials(status: 401)
        let (fx, hashes) = try backlog(server, count: 10, token: "tok-1", extra: "backoff = 2s\nmax_backoff = 4s")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        try expectPaused(fx, daemon, files: 10, status: 401, metrics: true)

        try server.refuseCredentials(status: nil)
        try expectAllDelivered(fx, server, hashes, timeout: 20)
        let log = daemon.stderrText()
        XCTAssertEqual(log.components(separatedBy: "destination accepts our credentials again; resuming").count - 1, 1, log)
        XCTAssertFalse(log.contains("needs uploader retry"), log)
    }

    func testARewrittenTokenFileIsTriedAtOnce() throws {
        let server = try FaultServer()
        try server.refuseCredentials(status: 403, unlessAuthorization: "Bearer tok-new")
        // An hour's backoff: only the token file's change can bring the files through in time.
        let (fx, hashes) = try backlog(server, count: 6, token: "tok-old", extra: "backoff = 1h", logLevel: "debug")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        try expectPaused(fx, daemon, files: 6, status: 403)
        // The watch on the token's directory is in effect (the watcher thread takes it within a second).
        let directory = URL(fileURLWithPath: fx.tmp.path("token")).deletingLastPathComponent().path
        try waitUntil(timeout: 5, "the token's directory watched") {
            daemon.stderrText().split(separator: "\n").contains { $0.hasSuffix("watching dir=\(directory)") }
        }

        // Replaced the way install(1) or an editor does it: a new file renamed over the old one.
        _ = try fx.tmp.write(".token.new", "tok-new\n")
        XCTAssertEqual(rename(fx.tmp.path(".token.new"), fx.tmp.path("token")), 0)
        try expectAllDelivered(fx, server, hashes, timeout: 15)
        XCTAssertTrue(daemon.stderrText().contains("credentials file \(fx.tmp.path("token")) changed: reloading configuration"),
                      daemon.stderrText())
        let accepted = try server.recorded().filter { !$0.refusedCredentials }
        XCTAssertTrue(accepted.allSatisfy { $0.header("Authorization") == "Bearer tok-new" })
    }

    func testSIGHUPTriesAFileAtOnce() throws {
        let server = try FaultServer()
        try server.refuseCredentials(status: 401)
        let (fx, hashes) = try backlog(server, count: 4, token: "tok", extra: "backoff = 1h")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        try expectPaused(fx, daemon, files: 4, status: 401)

        // The server was fixed, not our token: nothing changed on our side but the operator's SIGHUP.
        try server.refuseCredentials(status: nil)
        daemon.send(SIGHUP)
        try expectAllDelivered(fx, server, hashes, timeout: 15)
    }

    func testRunOnceStopsAtTheThirdRefusalLeavesEveryFileQueuedAndExits69() throws {
        let server = try FaultServer()
        try server.refuseCredentials(status: 401)
        let (fx, _) = try backlog(server, count: 8, token: "tok", concurrency: 1)
        let run = try fx.runOnce()
        XCTAssertEqual(run.exitCode, 69, run.description)
        let errors = run.stderr.split(separator: "\n").filter { $0.contains("destination refuses our credentials") }
        XCTAssertEqual(errors.count, 1, run.stderr)
        XCTAssertTrue(errors.first?.contains("HTTP 401") ?? false, run.stderr)
        XCTAssertEqual(fx.files(in: fx.retry), [])
        XCTAssertEqual(fx.files(in: fx.outbox).count, 8)
        XCTAssertEqual(try server.recorded().count, 3, "no fourth file was tried")
    }
}
