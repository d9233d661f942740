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

/// Issue #5: `body = json` through the daemon, checked by Python's `json` and `base64` modules.
final class JSONUploadTests: XCTestCase {
    func testJSONObjectCarriesFieldsNameSizeDigestAndTheBytesInBase64() throws {
        let server = try FaultServer()
        let fx = try SpoolFixture(url: server.url("hook"), extra: """
            method = POST
            body = json
            form.device = cam-7
            form.upload_id = {id}
            form.where = {profile}@{hostname}
            form.size = not-a-size
            """)
        let bytes = Data((0..<256).map { UInt8($0) } + Array("ünï\n".utf8))
        try fx.drop("ünï \"q\".bin", bytes)
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.description)
        let manifest = try fx.manifest("ünï \"q\".bin", in: fx.sent)

        let request = try XCTUnwrap(try server.recorded().first)
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.path, "/hook")
        XCTAssertEqual(request.header("Content-Type"), "application/json")
        let object = try XCTUnwrap(request.json, request.jsonError ?? "no JSON")
        XCTAssertEqual(Set(object.keys), ["device", "upload_id", "where", "name", "size", "sha256", "content_base64"])
        XCTAssertEqual(object["device"] as? String, "cam-7")
        XCTAssertEqual(object["upload_id"] as? String, manifest.id)
        XCTAssertEqual(object["where"] as? String, "t@" + Daemon.hostname())
        XCTAssertEqual(object["name"] as? String, "ünï \"q\".bin")
        XCTAssertEqual(object["size"] as? Int, bytes.count, "the fixed keys win over a form field of the same name")
        XCTAssertEqual(object["sha256"] as? String, sha256(of: bytes))
        let content = try XCTUnwrap(object["content_base64"] as? [String: Any])
        XCTAssertEqual(content["length"] as? Int, bytes.count)
        XCTAssertEqual(content["sha256"] as? String, sha256(of: bytes), "decoded bytes are the file's")
    }

    func testAJSONBodyOverSixteenMebibytesFailsForGoodWithAClearReasonAndExactlySixteenIsSent() throws {
        let server = try FaultServer()
        let fx = try SpoolFixture(url: server.url("hook/{name}"), extra: "method = PUT\nbody = json")
        try fx.drop("limit.bin", Data(repeating: 0x41, count: 16 << 20))
        try fx.drop("over.bin", Data(repeating: 0x41, count: (16 << 20) + 1))
        let result = try fx.runOnce(timeout: 120)
        XCTAssertEqual(result.exitCode, 1, "a file went to retry/ failed: \(result)")
        XCTAssertEqual(fx.files(in: fx.sent), ["limit.bin"])
        XCTAssertEqual(fx.files(in: fx.retry), ["over.bin"])
        let failed = try fx.manifest("over.bin", in: fx.retry)
        XCTAssertEqual(failed.state, .failed)
        XCTAssertEqual(failed.lastError, "body = json supports files up to 16 MiB; this file is 16777217 bytes")
        XCTAssertNil(failed.nextAttemptAt, "permanent: never retried by itself")
        XCTAssertEqual(failed.attempts.count, 0, "no request was made, so no attempt is recorded")

        let requests = try server.recorded()
        XCTAssertEqual(requests.map(\.path), ["/hook/limit.bin"], "the oversized file is never sent")
        XCTAssertEqual(requests.first?.method, "PUT")
        let content = try XCTUnwrap(requests.first?.json?["content_base64"] as? [String: Any], requests.first?.jsonError ?? "")
        XCTAssertEqual(content["length"] as? Int, 16 << 20)
        XCTAssertTrue(result.stderr.contains("16 MiB"), "the reason is logged: \(result.stderr)")
    }
}
