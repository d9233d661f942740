import Foundation
import XCTest
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// Issue #4: what the server answers decides where a file goes — retry later, fail for
/// good, or (unreachable) stay queued with no attempt spent.
final class RetryDispositionTests: XCTestCase {
    private func manifestWhenIn(_ dir: String, _ name: String, _ fx: SpoolFixture, timeout: TimeInterval = 15,
                                _ condition: @escaping (Manifest) -> Bool = { _ in true }) throws -> Manifest {
        try waitFor(timeout: timeout, "\(name) in \(dir)") {
            guard let m = try? fx.manifest(name, in: dir), condition(m) else { return nil }
            return m
        }
    }

    func testServiceUnavailableGoesToRetryThenArrives() throws {
        let server = try FaultServer()
        try server.script([["status": 503], ["status": 201]])
        let fx = try SpoolFixture(url: server.url("up/{name}"), extra: "backoff = 1s\nmax_backoff = 2s")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        try fx.drop("a.bin", Data(repeating: 1, count: 5000))
        // Full jitter may bring the file back at once, so the stay in retry/ is read from
        // the log and the final manifest rather than caught on disk.
        let sent = try manifestWhenIn(fx.sent, "a.bin", fx, timeout: 15)
        XCTAssertEqual(sent.attempts.map(\.httpStatus), [503, 201])
        XCTAssertEqual(sent.attempts.first?.retryable, true)
        XCTAssertEqual(sent.attempts.first?.error, "HTTP 503 Service Unavailable")
        let log = daemon.stderrText()
        XCTAssertTrue(log.contains("will retry") && log.contains("next_attempt_at="), log)
        let requests = try server.requests()
        XCTAssertEqual(requests.count, 2)
        let keys = requests.map { request in
            (request["headers"] as? [[String]] ?? []).first { $0[0].lowercased() == "idempotency-key" }?[1]
        }
        XCTAssertEqual(keys, [sent.id, sent.id], "the same Idempotency-Key on every attempt")
    }

    func testRetryAfterHeaderWinsOverBackoff() throws {
        let server = try FaultServer()
        try server.script([["status": 429, "retry_after": "2"], ["status": 201]])
        let fx = try SpoolFixture(url: server.url("{name}"), extra: "backoff = 250ms\nmax_backoff = 1h")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        try fx.drop("b.bin", Data(repeating: 2, count: 100))
        let sent = try manifestWhenIn(fx.sent, "b.bin", fx, timeout: 15)
        XCTAssertEqual(sent.attempts.map(\.httpStatus), [429, 201])
        let times = try server.requests().compactMap { $0["received_at"] as? Double }
        XCTAssertEqual(times.count, 2)
        XCTAssertGreaterThanOrEqual(times[1] - times[0], 1.9, "no attempt before Retry-After")
    }

    func testBadRequestFailsForGoodUntilUploaderRetry() throws {
        let server = try FaultServer()
        try server.script([["status": 400, "body": "go away"], ["status": 201]])
        let fx = try SpoolFixture(url: server.url("{name}"), extra: "backoff = 1s")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        try fx.drop("c.bin", Data(repeating: 3, count: 100))
        let failed = try manifestWhenIn(fx.retry, "c.bin", fx) { $0.state == .failed }
        XCTAssertEqual(failed.lastError, "HTTP 400 Bad Request")
        XCTAssertEqual(failed.remote?.response, "go away")
        XCTAssertNil(failed.nextAttemptAt)
        XCTAssertEqual(try server.requests().count, 1)
        // `uploader retry` while the daemon runs: back to the outbox, attempted at once.
        let retried = try fx.run(["retry", "--all"])
        XCTAssertEqual(retried.exitCode, 0, retried.stderr)
        let sent = try manifestWhenIn(fx.sent, "c.bin", fx)
        XCTAssertEqual(sent.attempts.map(\.httpStatus), [400, 201], "history kept")
        XCTAssertEqual(try server.requests().count, 2)
    }

    func testResetInTheMiddleOfTheBodyIsRetryable() throws {
        let server = try FaultServer()
        try server.script([["reset_after_bytes": 20_000]])
        let fx = try SpoolFixture(url: server.url("{name}"), extra: "backoff = 1h")
        try fx.drop("d.bin", Data(repeating: 4, count: 200_000))
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 1, result.stderr)
        let m = try fx.manifest("d.bin", in: fx.retry)
        XCTAssertEqual(m.state, .retry)
        XCTAssertEqual(m.attempts.count, 1)
        XCTAssertEqual(m.attempts[0].retryable, true)
        XCTAssertNil(m.attempts[0].httpStatus)
        XCTAssertNotNil(m.attempts[0].error)
    }

    func testStallLongerThanStallTimeoutIsAbortedAndRetryable() throws {
        let server = try FaultServer()
        try server.script([["stall_after_bytes": 10_000, "stall_seconds": 8]])
        let fx = try SpoolFixture(url: server.url("{name}"), extra: "stall_timeout = 1s\nbackoff = 1h")
        try fx.drop("e.bin", Data(repeating: 5, count: 4 << 20))
        let started = Date()
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 1, result.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 7, "aborted by stall_timeout, not by the server")
        let m = try fx.manifest("e.bin", in: fx.retry)
        XCTAssertEqual(m.state, .retry)
        XCTAssertTrue(m.lastError?.contains("stall") ?? false, m.lastError ?? "nil")
    }

    func testConnectRefusedLeavesFilesQueuedWithNoAttemptAndExitsSixtyNine() throws {
        let port = try FreePort.next()
        let fx = try SpoolFixture(url: "http://127.0.0.1:\(port)/{name}")
        try fx.drop("f.bin", Data(repeating: 6, count: 100))
        try fx.drop("g.bin", Data(repeating: 7, count: 100))
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 69, result.stderr)
        XCTAssertEqual(fx.files(in: fx.outbox), ["f.bin", "g.bin"])
        XCTAssertEqual(fx.names(in: fx.retry), [])
        for name in fx.files(in: fx.outbox) where FileManager.default.fileExists(atPath: fx.outbox + "/" + name + ".manifest.json") {
            let m = try fx.manifest(name, in: fx.outbox)
            XCTAssertEqual(m.state, .queued)
            XCTAssertEqual(m.attempts.count, 0, "a connect that failed is no attempt")
        }
    }

    func testOutOfAttemptsBecomesFailed() throws {
        let server = try FaultServer()
        try server.script([["status": 500], ["status": 502]])
        let fx = try SpoolFixture(url: server.url("{name}"), extra: "backoff = 250ms\nmax_backoff = 250ms\nmax_attempts = 2")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        try fx.drop("h.bin", Data(repeating: 8, count: 100))
        let failed = try manifestWhenIn(fx.retry, "h.bin", fx) { $0.state == .failed }
        XCTAssertEqual(failed.attempts.map(\.httpStatus), [500, 502])
        XCTAssertTrue(failed.lastError?.contains("gave up after 2 attempts") ?? false, failed.lastError ?? "nil")
        // `uploader retry` starts the count afresh: one more 503 is retried, not failed again.
        try server.script([["status": 503], ["status": 201]])
        XCTAssertEqual(try fx.run(["retry", "h.bin"]).exitCode, 0)
        let sent = try manifestWhenIn(fx.sent, "h.bin", fx)
        XCTAssertEqual(sent.attempts.map(\.httpStatus), [500, 502, 503, 201], "history kept")
        XCTAssertEqual(sent.attemptsBeforeRetry, 2)
    }

    func testRunOnceRetriesWhatIsDueAndExitsOneWhenSomethingWentToRetry() throws {
        let server = try FaultServer()
        try server.script([["status": 503]])
        let fx = try SpoolFixture(url: server.url("{name}"), extra: "backoff = 1h")
        try fx.drop("i.bin", Data(repeating: 9, count: 100))
        XCTAssertEqual(try fx.runOnce().exitCode, 1)
        XCTAssertEqual(try fx.manifest("i.bin", in: fx.retry).state, .retry)
        // Not due yet: a second run leaves it alone and has nothing to do.
        XCTAssertEqual(try fx.runOnce().exitCode, 0)
        XCTAssertEqual(try server.requests().count, 1)
        // Made due (as time passing would), the next run takes it and succeeds.
        var m = try fx.manifest("i.bin", in: fx.retry)
        m.nextAttemptAt = Timestamp.format(Date().addingTimeInterval(-1))
        try Data(m.encodedLine()).write(to: URL(fileURLWithPath: fx.retry + "/i.bin.manifest.json"))
        XCTAssertEqual(try fx.runOnce().exitCode, 0)
        XCTAssertEqual(try fx.manifest("i.bin", in: fx.sent).attempts.count, 2)
    }
}
