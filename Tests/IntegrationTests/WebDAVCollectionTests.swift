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

/// Issue #25 (DESIGN §12): Apache mod_dav answers 409 to a PUT into a collection that does not
/// exist; the built binary makes the collections with MKCOL, parents first, within the attempt.
final class WebDAVCollectionTests: XCTestCase {
    /// Where the server stored the file the manifest's `remote.url` names (its path decoded).
    private func stored(_ manifest: Manifest, on apache: ApacheDAV) throws -> String {
        let url = try XCTUnwrap(manifest.remote?.url)
        let path = try XCTUnwrap(URLComponents(string: url)?.percentEncodedPath.removingPercentEncoding)
        return apache.file(path)
    }

    func testNestedFilesLandInNewCollectionsWithOneAttemptEach() throws {
        let apache = try ApacheDAV()
        let fx = try SpoolFixture(url: apache.origin + "/dav/{date}/{path}", extra: "recursive = yes\nconcurrency = 4")
        let names = ["top.txt", "a/one.bin", "a/b/two.bin", "a/b/c/three.bin", "a/b/c/four.bin", "d/five.bin", "d/e f/six.bin"]
        var expected: [String: String] = [:]
        for (i, name) in names.enumerated() {
            _ = try fx.tmp.mkdir("spool/outbox/" + (name as NSString).deletingLastPathComponent)
            let data = Data((0..<(40_000 + i * 1_000)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) })
            try fx.drop(name, data)
            expected[name] = sha256(of: data)
        }

        let ran = try fx.runOnce()
        XCTAssertEqual(ran.exitCode, 0, "\(ran)\n\(apache.errorLogText())")
        for (name, hash) in expected {
            let manifest = try fx.manifest(name, in: fx.sent)
            XCTAssertEqual(manifest.state, .sent, name)
            // One attempt each, though four workers make the same new collections at once (the
            // slower MKCOL of a pair is answered 403 by Apache, and asked again).
            XCTAssertEqual(manifest.attempts.count, 1,
                           "\(name): the 409, the MKCOLs and the PUT again are one attempt: \(manifest.attempts.map { "\($0.httpStatus.map(String.init) ?? "-") \($0.error ?? "")" })")
            XCTAssertEqual(manifest.remote?.httpStatus, 201, name)
            let path = try stored(manifest, on: apache)
            XCTAssertTrue(path.hasSuffix("/" + name), path)
            XCTAssertEqual(try sha256(ofFile: path), hash, "what Apache stored for \(name)")
        }
        let requests = apache.requests()
        XCTAssertTrue(requests.contains { $0.method == "PUT" && $0.status == 409 }, "Apache refused PUTs into missing collections")
        XCTAssertTrue(requests.contains { $0.method == "MKCOL" && $0.status == 201 })
        XCTAssertTrue(requests.contains { $0.method == "MKCOL" && $0.path.hasSuffix("/d/e%20f/") && $0.status == 201 },
                      "collection names are percent-encoded like the file's: \(requests)")
    }

    func testEachCollectionIsMadeOnceAndLaterPutsIntoItGoStraightIn() throws {
        let apache = try ApacheDAV()
        let fx = try SpoolFixture(url: apache.origin + "/dav/{date}/{path}", extra: "recursive = yes\nconcurrency = 1")
        let names = ["x/y/c1.bin", "x/y/c2.bin", "x/y/z/d.bin"]
        _ = try fx.tmp.mkdir("spool/outbox/x/y/z")
        for name in names { try fx.drop(name, Data(name.utf8)) }

        let ran = try fx.runOnce()
        XCTAssertEqual(ran.exitCode, 0, "\(ran)\n\(apache.errorLogText())")
        var date = ""
        for name in names {
            let manifest = try fx.manifest(name, in: fx.sent)
            XCTAssertEqual(manifest.attempts.count, 1, name)
            XCTAssertEqual(try String(contentsOfFile: try stored(manifest, on: apache), encoding: .utf8), name)
            date = try XCTUnwrap(manifest.remote?.url.components(separatedBy: "/dav/").last?.split(separator: "/").first.map(String.init))
        }
        let mkcols = apache.requests().filter { $0.method == "MKCOL" }.map(\.path)
        XCTAssertEqual(mkcols.sorted(), ["/dav/", "/dav/\(date)/", "/dav/\(date)/x/", "/dav/\(date)/x/y/", "/dav/\(date)/x/y/z/"],
                       "every collection asked for once, parents first, none again for later files")
        XCTAssertEqual(mkcols.first, "/dav/", "from the top")
        let puts = apache.requests().filter { $0.method == "PUT" }
        XCTAssertEqual(puts.filter { $0.status == 201 }.count, 3)
        XCTAssertLessThanOrEqual(puts.filter { $0.status == 409 }.count, 2, "a file into a known collection is not refused: \(puts)")
    }

    /// examples/webdav-put, as shipped, against Apache with basic auth: its url's fixed part
    /// (`/dav/incoming/`) and the dated and nested collections are all made by the uploader.
    func testTheWebDAVExampleWorksWithApacheAndBasicAuth() throws {
        let apache = try ApacheDAV(basicAuth: (user: "uploader", password: "dav-pass-123"))
        let dir = try TempDir(prefix: "upl-example")
        let config = try dir.write("uploader.conf", try Data(contentsOf: URL(fileURLWithPath: PackagePaths.root + "/examples/webdav-put/uploader.conf")))
        XCTAssertEqual(chmod(try dir.write("webdav.password", "dav-pass-123\n"), 0o600), 0)
        let content = Data("%PDF-1.7 example\n".utf8) + Data((0..<5000).map { UInt8(truncatingIfNeeded: $0) })
        try dir.write("spool/webdav/outbox/sub dir/report 1.pdf", content)

        let ran = try UploaderBinary().run(["run", "--once", "--config", config], environment: ["UPLOAD_URL": apache.origin])
        XCTAssertEqual(ran.exitCode, 0, "\(ran)\n\(apache.errorLogText())")
        let manifest = try Manifest.decode(Data(contentsOf: URL(fileURLWithPath: dir.path("spool/webdav/sent/sub dir/report 1.pdf.manifest.json"))))
        XCTAssertEqual(manifest.attempts.count, 1)
        let path = try stored(manifest, on: apache)
        XCTAssertTrue(path.hasPrefix(apache.root + "/dav/incoming/") && path.hasSuffix("/sub dir/report 1.pdf"), path)
        XCTAssertEqual(try sha256(ofFile: path), sha256(of: content))
        let mkcols = apache.requests().filter { $0.method == "MKCOL" }
        XCTAssertTrue(mkcols.contains { $0.path == "/dav/incoming/" && $0.status == 201 }, "\(mkcols)")
        XCTAssertFalse(apache.requests().contains { $0.status == 401 }, "every request carried the credentials")
    }
}
