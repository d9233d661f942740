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

/// Issue #5: what the server answered lands in the manifest; content types come from mime.types.
final class ResponseCaptureTests: XCTestCase {
    func testStatusETagLocationURLAndBodyOfTheAnswerAreKeptInTheManifest() throws {
        let server = try FaultServer()
        try server.script([
            ["status": 201, "body": "{\"id\": 42, \"note\": \"créé\"}",
             "headers": ["ETag": "W/\"5e-abc\"", "Location": "https://cdn.example.test/files/42"]],
        ])
        let fx = try SpoolFixture(url: server.url("store/{name}?v=1"))
        try fx.drop("doc one.txt", Data("abc".utf8))
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.description)
        let json = try fx.manifestJSON("doc one.txt", in: fx.sent)
        let remote = try XCTUnwrap(json["remote"] as? [String: Any])
        XCTAssertEqual(remote["url"] as? String, server.url("store/doc%20one.txt?v=1"))
        XCTAssertEqual(remote["http_status"] as? Int, 201)
        XCTAssertEqual(remote["etag"] as? String, "W/\"5e-abc\"", "the header as received")
        XCTAssertEqual(remote["location"] as? String, "https://cdn.example.test/files/42")
        XCTAssertEqual(remote["response"] as? String, "{\"id\": 42, \"note\": \"créé\"}")
    }

    func testOnlyTheFirstSixtyFourKibibytesOfALongAnswerAreKept() throws {
        let server = try FaultServer()
        try server.script([["big_response_bytes": 200_000]])
        let fx = try SpoolFixture(url: server.url("{name}"))
        try fx.drop("a.bin", Data("a".utf8))
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.description)
        let manifest = try fx.manifest("a.bin", in: fx.sent)
        XCTAssertEqual(manifest.remote?.httpStatus, 200)
        XCTAssertEqual(manifest.remote?.response, String(repeating: "x", count: 65_536))
    }

    func testARefusalKeepsTheAnswerAndTheStatusInTheFailedManifest() throws {
        let server = try FaultServer()
        try server.script([["status": 422, "body": "field 'device' is required"]])
        let fx = try SpoolFixture(url: server.url("{name}"))
        try fx.drop("r.txt", Data("r".utf8))
        XCTAssertEqual(try fx.runOnce().exitCode, 1)
        let manifest = try fx.manifest("r.txt", in: fx.retry)
        XCTAssertEqual(manifest.state, .failed)
        XCTAssertTrue(manifest.lastError?.hasPrefix("HTTP 422 ") ?? false, manifest.lastError ?? "nil")
        XCTAssertEqual(manifest.remote?.httpStatus, 422)
        XCTAssertEqual(manifest.remote?.response, "field 'device' is required")
    }

    func testContentTypesComeFromMimeTypesByExtensionCaseInsensitively() throws {
        let expected: [String: String] = [
            "report.PDF": "application/pdf", "report.pdf": "application/pdf",
            "photo.jpg": "image/jpeg", "PHOTO.JPG": "image/jpeg", "notes.TxT": "text/plain",
            "data.json": "application/json", "archive.tar.gz": "application/gzip",
            "blob.nosuchext": "application/octet-stream", "noextension": "application/octet-stream",
        ]
        let server = try FaultServer()
        let fx = try SpoolFixture(url: server.url("{name}"))
        for name in expected.keys { try fx.drop(name, Data(name.utf8)) }
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.description)
        let requests = try server.recorded()
        for (name, type) in expected {
            let request = requests.first { $0.path == "/" + name }
            XCTAssertEqual(request?.header("Content-Type"), type, name)
            XCTAssertEqual(try fx.manifest(name, in: fx.sent).contentType, type, name)
        }
    }
}
