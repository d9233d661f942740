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

/// An attempt is one HTTP request that reached the destination (DESIGN §1): the destination
/// sees exactly as many requests per `Idempotency-Key` as the file's manifest records attempts,
/// even when libcurl would re-send a request by itself on a kept-alive connection that died.
final class RequestCountTests: XCTestCase {
    func testServerRequestsPerIdempotencyKeyEqualTheManifestsAttempts() throws {
        let server = try FaultServer()
        // Every connection's first request is answered; a reused connection's request is read
        // whole and then closed without an answer (what libcurl takes for a stale connection).
        try server.script(Array(repeating: ["close_reused_without_answer": true], count: 200))
        let fx = try SpoolFixture(url: server.url("up/{name}"), extra: "concurrency = 1\nbackoff = 1h")
        // More files than the runner has workers, so some worker sends a second file on its kept-alive connection.
        let names = (0..<40).map { String(format: "f%02d.bin", $0) }
        for (i, name) in names.enumerated() { try fx.drop(name, Data(repeating: UInt8(i), count: 20_000 + i)) }

        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 1, "files closed without an answer went to retry/: \(result.stderr)")

        let recorded = try server.recorded()
        let ports = recorded.compactMap { $0.raw["client_port"] as? Int }
        XCTAssertLessThan(Set(ports).count, ports.count, "some request went over a reused connection")
        var requestsPerKey: [String: Int] = [:]
        for request in recorded { requestsPerKey[request.header("Idempotency-Key") ?? "", default: 0] += 1 }

        var retried = 0
        for name in names {
            let inSent = FileManager.default.fileExists(atPath: fx.sent + "/" + name)
            let manifest = try fx.manifest(name, in: inSent ? fx.sent : fx.retry)
            XCTAssertEqual(requestsPerKey[manifest.id], manifest.attempts.count,
                           "\(name): requests at the server vs attempts in its manifest (\(manifest.state.rawValue))")
            if !inSent {
                retried += 1
                XCTAssertEqual(manifest.state, .retry)
                XCTAssertEqual(manifest.attempts.first?.retryable, true)
                XCTAssertEqual(manifest.attempts.first?.bytesSent, Int64(manifest.size), "the server read the whole body")
            }
        }
        XCTAssertGreaterThan(retried, 0, "some file met a connection closed without an answer")
        XCTAssertEqual(requestsPerKey.values.reduce(0, +), recorded.count)
    }
}
