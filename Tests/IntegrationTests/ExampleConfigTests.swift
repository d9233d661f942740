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

/// Issue #5: every config in `examples/` passes `check-config` and uploads one file to the
/// test server (its `${UPLOAD_URL}` pointed there, its secret files written beside it).
final class ExampleConfigTests: XCTestCase {
    private struct Example {
        var name: String
        var profile: String
        /// Files the example expects beside it (secrets), name → content.
        var files: [String: String] = [:]
        var environment: [String: String] = [:]
        /// A file to drop, relative to the outbox.
        var drop = "report 1.pdf"
        var check: (RecordedRequest, Data) throws -> Void
    }

    private let content = Data("%PDF-1.7 example\n".utf8) + Data((0..<200).map { UInt8($0) })

    private var examples: [Example] {
        [
            Example(name: "webdav-put", profile: "webdav", files: ["webdav.password": "dav-pass-123\n"],
                    drop: "sub dir/report 1.pdf") { request, content in
                XCTAssertEqual(request.method, "PUT")
                XCTAssertTrue(request.path.hasPrefix("/dav/incoming/"), request.path)
                XCTAssertTrue(request.path.hasSuffix("/sub%20dir/report%201.pdf"), request.path)
                XCTAssertEqual(request.header("Authorization"), "Basic " + Data("uploader:dav-pass-123".utf8).base64EncodedString())
                XCTAssertEqual(request.header("Content-Type"), "application/pdf")
                XCTAssertEqual(request.bodySHA256, sha256(of: content))
            },
            Example(name: "multipart-form", profile: "scans") { request, content in
                XCTAssertEqual(request.method, "POST")
                XCTAssertEqual(request.path, "/api/upload")
                let parts = try XCTUnwrap(request.parts, request.multipartError ?? "not multipart")
                XCTAssertEqual(parts.map(\.name), ["device", "upload_id", "checksum", "folder", "file"])
                XCTAssertEqual(parts[2].value, "sha256:" + sha256(of: content))
                XCTAssertEqual(parts.last?.filename, "report 1.pdf")
                XCTAssertEqual(parts.last?.contentType, "application/pdf")
                XCTAssertEqual(parts.last?.sha256, sha256(of: content))
                XCTAssertEqual(request.header("X-Uploader-Profile"), "scans")
            },
            Example(name: "json-webhook", profile: "readings", environment: ["WEBHOOK_TOKEN": "hook-token-456"]) { request, content in
                XCTAssertEqual(request.method, "POST")
                XCTAssertEqual(request.path, "/hooks/files")
                XCTAssertEqual(request.header("Authorization"), "Bearer hook-token-456")
                let object = try XCTUnwrap(request.json, request.jsonError ?? "no JSON")
                XCTAssertEqual(object["event"] as? String, "file.created")
                XCTAssertEqual(object["name"] as? String, "report 1.pdf")
                XCTAssertEqual(object["size"] as? Int, content.count)
                XCTAssertEqual((object["content_base64"] as? [String: Any])?["sha256"] as? String, sha256(of: content))
            },
            Example(name: "bearer-api", profile: "archive", files: ["api.token": "api-token-789\n"]) { request, content in
                XCTAssertEqual(request.method, "PUT")
                XCTAssertTrue(request.path.hasPrefix("/v1/objects/archive/"), request.path)
                XCTAssertTrue(request.path.hasSuffix("/report%201.pdf"), request.path)
                XCTAssertEqual(request.header("Authorization"), "Bearer api-token-789")
                XCTAssertEqual(request.header("X-Content-SHA256"), sha256(of: content))
                XCTAssertEqual(request.bodySHA256, sha256(of: content))
            },
        ]
    }

    func testEveryFormatHasAnExampleInTheRepository() throws {
        let listed = try FileManager.default.contentsOfDirectory(atPath: PackagePaths.root + "/examples")
        for example in examples {
            XCTAssertTrue(listed.contains(example.name), "examples/\(example.name) is missing")
        }
    }

    func testEveryExamplePassesCheckConfigAndUploadsAFileToTheTestServer() throws {
        let server = try FaultServer()
        let binary = try UploaderBinary()
        for example in examples {
            let dir = try TempDir(prefix: "upl-example")
            let source = PackagePaths.root + "/examples/\(example.name)/uploader.conf"
            let config = try dir.write("uploader.conf", try Data(contentsOf: URL(fileURLWithPath: source)))
            for (name, text) in example.files {
                let path = try dir.write(name, text)
                XCTAssertEqual(chmod(path, 0o600), 0)
            }
            var environment = example.environment
            environment["UPLOAD_URL"] = String(server.baseURL.dropLast())

            let checked = try binary.run(["check-config", "--config", config], environment: environment)
            XCTAssertEqual(checked.exitCode, 0, "\(example.name): \(checked)")
            XCTAssertTrue(checked.stdout.contains("[outbox \(example.profile)]"), "\(example.name): \(checked.stdout)")
            for secret in example.environment.values + example.files.values.map({ $0.trimmingCharacters(in: .newlines) }) {
                XCTAssertFalse(checked.stdout.contains(secret) || checked.stderr.contains(secret), "\(example.name) printed a secret")
            }

            try dir.write("spool/\(example.profile)/outbox/" + example.drop, content)
            try server.script([])
            let before = try server.recorded().count
            let ran = try binary.run(["run", "--once", "--config", config], environment: environment)
            XCTAssertEqual(ran.exitCode, 0, "\(example.name): \(ran)")
            XCTAssertTrue(FileManager.default.fileExists(atPath: dir.path("spool/\(example.profile)/sent/" + example.drop)),
                          "\(example.name): the file is in sent/")
            let requests = try server.recorded().dropFirst(before)
            XCTAssertEqual(requests.count, 1, example.name)
            if let request = requests.first { try example.check(request, content) }
        }
    }
}
