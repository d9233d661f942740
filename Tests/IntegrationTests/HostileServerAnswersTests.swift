@preconcurrency import Glibc
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

/// Issue #6: the server's answers are not trusted either — huge or binary bodies, floods of
/// headers, absurd Retry-After values and redirects elsewhere are bounded or refused.
final class HostileServerAnswersTests: XCTestCase {
    private func fixture(_ server: FaultServer, extra: String = "") throws -> SpoolFixture {
        try SpoolFixture(url: server.baseURL + "in/{name}", extra: "concurrency = 1\n" + extra)
    }

    private func paths(_ server: FaultServer) throws -> [String] { try server.requests().compactMap { $0["path"] as? String } }

    func testAResponseBodyOfMegabytesKeepsOnlySixtyFourKibibytesInTheManifest() throws {
        let server = try FaultServer()
        try server.script([["big_response_bytes": 3_000_000]])
        let fx = try fixture(server)
        try fx.drop("a.txt", Data("a".utf8))
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let manifest = try fx.manifest("a.txt", in: fx.sent)
        XCTAssertEqual(manifest.remote?.response?.utf8.count, 64 * 1024)
        XCTAssertLessThan(try FileSystem.status(path: fx.sent + "/a.txt.manifest.json").size, 80 * 1024)
    }

    func testABinaryGarbageResponseLeavesAValidManifestAndUnbrokenLogLines() throws {
        let server = try FaultServer()
        try server.script([["garbage_response_bytes": 200_000]])
        let fx = try fixture(server)
        try fx.drop("g.txt", Data("g".utf8))
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let json = try fx.manifestJSON("g.txt", in: fx.sent)
        let response = (json["remote"] as? [String: Any])?["response"] as? String
        XCTAssertNotNil(response)
        XCTAssertTrue(response?.contains("\u{FFFD}") ?? false, "invalid UTF-8 shown as U+FFFD")
        XCTAssertLessThanOrEqual(response?.unicodeScalars.count ?? .max, 64 * 1024)
        let stamp = try Regex("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z (ERROR|WARN|INFO|DEBUG) ")
        for line in result.stderr.split(separator: "\n") { XCTAssertNotNil(String(line).firstMatch(of: stamp), String(line)) }
        let status = try fx.run(["status", "--json"])
        XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)), status.stdout)
    }

    func testAHeaderBlockOfHundredsOfHeadersIsReadAndTheUploadSucceeds() throws {
        let server = try FaultServer()
        try server.script([["many_headers": 500]])
        let fx = try fixture(server)
        try fx.drop("h.txt", Data("h".utf8))
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let manifest = try fx.manifest("h.txt", in: fx.sent)
        XCTAssertEqual(manifest.remote?.httpStatus, 200)
        XCTAssertEqual(manifest.remote?.etag, "\"many\"")
    }

    func testARetryAfterOfYearsIsCappedByMaxBackoff() throws {
        let server = try FaultServer()
        try server.script([["status": 503, "retry_after": "999999999"],
                           ["status": 503, "retry_after": "Mon, 01 Jan 2080 00:00:00 GMT"]])
        let fx = try fixture(server, extra: "max_backoff = 1h")
        try fx.drop("a-seconds.txt", Data("1".utf8))
        try fx.drop("b-date.txt", Data("2".utf8))
        let before = Date()
        let result = try fx.runOnce()
        let after = Date()
        XCTAssertEqual(result.exitCode, 1, result.stderr)
        // Workers run in parallel, so either file may have met either answer; both must be capped.
        XCTAssertEqual(Set(try paths(server)), ["/in/a-seconds.txt", "/in/b-date.txt"])
        for name in ["a-seconds.txt", "b-date.txt"] {
            let manifest = try fx.manifest(name, in: fx.retry)
            XCTAssertEqual(manifest.state, .retry)
            let due = try XCTUnwrap(manifest.nextAttemptAt.flatMap(Timestamp.parse), "next_attempt_at of \(name)")
            XCTAssertGreaterThanOrEqual(due.timeIntervalSince(before), 3600 - 1, name)
            XCTAssertLessThanOrEqual(due.timeIntervalSince(after), 3600 + 1, "\(name): capped at max_backoff")
        }
    }

    func testARedirectToTheSameHostIsFollowedWithTheSameBody() throws {
        let server = try FaultServer()
        try server.script([["status": 307, "headers": ["Location": "/moved/r.bin"]], ["status": 201]])
        let fx = try fixture(server)
        let data = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 * 13) })
        try fx.drop("r.bin", data)
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let requests = try server.requests()
        XCTAssertEqual(requests.compactMap { $0["path"] as? String }, ["/in/r.bin", "/moved/r.bin"])
        XCTAssertEqual(requests.compactMap { $0["body_sha256"] as? String }, [sha256(of: data), sha256(of: data)])
        let manifest = try fx.manifest("r.bin", in: fx.sent)
        XCTAssertEqual(manifest.remote?.url, server.url("moved/r.bin"))
        XCTAssertEqual(manifest.remote?.httpStatus, 201)
    }

    func testARedirectToAnotherHostIsNotFollowed() throws {
        let server = try FaultServer()
        try server.script([["status": 307, "headers": ["Location": "http://localhost:\(server.port)/stolen"]]])
        let fx = try fixture(server)
        try fx.drop("o.txt", Data("o".utf8))
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 1, result.stderr)
        XCTAssertEqual(try paths(server), ["/in/o.txt"])
        let manifest = try fx.manifest("o.txt", in: fx.retry)
        XCTAssertEqual(manifest.state, .failed)
        XCTAssertTrue(manifest.lastError?.contains("307") ?? false, manifest.lastError ?? "")
        XCTAssertTrue(manifest.lastError?.contains("not followed") ?? false, manifest.lastError ?? "")
    }

    func testRedirectsStopAfterFiveHops() throws {
        let server = try FaultServer()
        try server.script((1...7).map { ["status": 302, "headers": ["Location": "/loop/\($0)"]] })
        let fx = try fixture(server)
        try fx.drop("l.txt", Data("l".utf8))
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 1, result.stderr)
        XCTAssertEqual(try paths(server), ["/in/l.txt", "/loop/1", "/loop/2", "/loop/3", "/loop/4", "/loop/5"],
                       "the first request and five hops")
        XCTAssertEqual(try fx.manifest("l.txt", in: fx.retry).state, .failed)
    }

    func testARedirectFromHTTPSDownToHTTPIsNotFollowed() throws {
        let plain = try FaultServer()
        let secure = try FaultServer(tls: true)
        try secure.script([["status": 308, "headers": ["Location": plain.url("down/s.txt")]]])
        let fx = try fixture(secure, extra: "ca_file = \(secure.certificate!)")
        try fx.drop("s.txt", Data("s".utf8))
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 1, result.stderr)
        XCTAssertEqual(try paths(secure), ["/in/s.txt"], "reached over TLS")
        XCTAssertEqual(try plain.requests().count, 0, "never re-sent in clear text")
        let manifest = try fx.manifest("s.txt", in: fx.retry)
        XCTAssertEqual(manifest.state, .failed)
        XCTAssertTrue(manifest.lastError?.contains("not followed") ?? false, manifest.lastError ?? "")
    }
}
