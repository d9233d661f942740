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

/// Issue #5: `body = multipart` through the daemon, checked by Python's `email` parser.
final class MultipartUploadTests: XCTestCase {
    /// Dropped name → the filename a parser must read back (RFC 7578 / WHATWG escaping of `"` and `\`).
    private let names: [(dropped: String, filename: String)] = [
        ("plain.txt", "plain.txt"),
        ("with two spaces.txt", "with two spaces.txt"),
        ("say \"cheese\".txt", "say %22cheese%22.txt"),
        ("back\\slash.txt", "back%5Cslash.txt"),
        ("ünï €.txt", "ünï €.txt"),
        ("scan.PDF", "scan.PDF"),
    ]

    func testEveryPartParsesWithFieldsFirstThenTheFileWithItsNameTypeAndExactBytes() throws {
        let server = try FaultServer()
        let fx = try SpoolFixture(url: server.url("forms/{name}"), extra: """
            method = POST
            body = multipart
            multipart_field = upload
            form.id = {id}
            form.digest = sha256:{sha256}
            form.source = {profile}/cam-7
            """)
        var contents: [String: Data] = [:]
        for (index, entry) in names.enumerated() {
            var bytes = Data((0..<256).map { UInt8($0) })
            bytes.append(Data("\r\n--not-a-boundary\r\n file \(index)".utf8))
            contents[entry.dropped] = bytes
            try fx.drop(entry.dropped, bytes)
        }
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.description)
        XCTAssertEqual(Set(fx.files(in: fx.sent)), Set(names.map(\.dropped)))

        let requests = try server.recorded()
        XCTAssertEqual(requests.count, names.count)
        for entry in names {
            let manifest = try fx.manifest(entry.dropped, in: fx.sent)
            guard let request = requests.first(where: { $0.header("Idempotency-Key") == manifest.id }) else {
                XCTFail("no request for \(entry.dropped)"); continue
            }
            XCTAssertEqual(request.method, "POST")
            XCTAssertNil(request.multipartError)
            XCTAssertTrue(request.header("Content-Type")?.hasPrefix("multipart/form-data; boundary=") ?? false)
            XCTAssertNil(request.header("Transfer-Encoding"), "exact Content-Length, never chunked")
            XCTAssertEqual(request.header("Content-Length"), String(request.bodyLength))
            guard let parts = request.parts else { XCTFail("\(entry.dropped): not parsed as multipart"); continue }
            XCTAssertEqual(parts.map(\.name), ["id", "digest", "source", "upload"], entry.dropped)
            XCTAssertEqual(parts.map(\.filename), [nil, nil, nil, entry.filename], entry.dropped)
            XCTAssertEqual(parts[0].value, manifest.id)
            XCTAssertEqual(parts[1].value, "sha256:" + (manifest.sha256 ?? "?"))
            XCTAssertEqual(parts[2].value, "t/cam-7")
            let file = parts[3]
            XCTAssertEqual(file.contentType, entry.dropped.hasSuffix(".PDF") ? "application/pdf" : "text/plain")
            XCTAssertEqual(file.length, contents[entry.dropped]?.count)
            XCTAssertEqual(file.sha256, sha256(of: contents[entry.dropped]!), "exact bytes of \(entry.dropped)")
            // Content-Digest covers the whole encoded body.
            let digest = Data(hex: request.bodySHA256)?.base64EncodedString() ?? "?"
            XCTAssertEqual(request.header("Content-Digest"), "sha-256=:\(digest):")
        }
    }

    func testMultipartWithPUTSendsTheSameBodyAndAnEmptyFile() throws {
        let server = try FaultServer()
        let fx = try SpoolFixture(url: server.url("put/{path}"), extra: """
            method = PUT
            body = multipart
            form.note = hello
            """)
        try fx.drop("empty.bin", Data())
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.description)
        let requests = try server.recorded()
        XCTAssertEqual(requests.map(\.method), ["PUT"])
        XCTAssertEqual(requests.first?.path, "/put/empty.bin")
        let parts = try XCTUnwrap(requests.first?.parts, requests.first?.multipartError ?? "not multipart")
        XCTAssertEqual(parts.map(\.name), ["note", "file"], "multipart_field defaults to file")
        XCTAssertEqual(parts.first?.value, "hello")
        XCTAssertEqual(parts.last?.filename, "empty.bin")
        XCTAssertEqual(parts.last?.contentType, "application/octet-stream")
        XCTAssertEqual(parts.last?.length, 0)
    }
}
