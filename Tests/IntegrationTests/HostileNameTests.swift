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

/// Issue #5: file names that look like URL syntax land at exactly their percent-encoded path
/// under the URL prefix: never outside it, never with a query or fragment.
final class HostileNameTests: XCTestCase {
    /// Dropped name → the request target nginx must log (the prefix is `/in/`). Names starting
    /// with `.` are never uploaded (§4), and `..` cannot be a file name: URLTemplateTests
    /// covers those segments.
    private let names: [(dropped: String, uri: String)] = [
        ("x..", "/in/x.."),
        ("a..b", "/in/a..b"),
        ("a b", "/in/a%20b"),
        ("%2F", "/in/%252F"),
        ("%2e%2e", "/in/%252e%252e"),
        ("?q", "/in/%3Fq"),
        ("#frag", "/in/%23frag"),
        ("line\nbreak", "/in/line%0Abreak"),
        ("tab\there", "/in/tab%09here"),
        ("ünï.txt", "/in/%C3%BCn%C3%AF.txt"),
        ("semi;colon&amp=1", "/in/semi%3Bcolon%26amp%3D1"),
        ("back\\slash", "/in/back%5Cslash"),
        ("~tilde-_.", "/in/~tilde-_."),
    ]

    func testEveryHostileNameLandsAtItsPercentEncodedPathUnderThePrefix() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("in/{name}"))
        for (index, entry) in names.enumerated() { try fx.drop(entry.dropped, Data("file \(index)".utf8)) }
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.description)
        XCTAssertEqual(Set(fx.files(in: fx.sent)), Set(names.map(\.dropped)))

        let log = sink.accessLog()
        XCTAssertEqual(Set(log.compactMap { $0["uri"] as? String }), Set(names.map(\.uri)), sink.accessLogLines().joined(separator: "\n"))
        XCTAssertTrue(log.allSatisfy { ($0["status"] as? Int) == 201 }, sink.accessLogLines().joined(separator: "\n"))
        for (index, entry) in names.enumerated() {
            XCTAssertEqual(try String(contentsOfFile: sink.file("in/" + entry.dropped), encoding: .utf8), "file \(index)",
                           "\(entry.dropped) stored under its own name inside the prefix")
        }
        // Nothing landed outside in/.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: sink.root), ["in"])
    }

    func testSubdirectoriesKeepTheirSlashesAndEachSegmentIsEncodedOnItsOwn() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("in/{profile}/{path}"), extra: "recursive = yes")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        try FileManager.default.createDirectory(atPath: fx.outbox + "/a b/c../?d", withIntermediateDirectories: true)
        try fx.drop("a b/c../?d/#e f.txt", Data("deep".utf8))
        try waitUntil(timeout: 15, "the nested file on the server") {
            sink.accessLog().contains { ($0["status"] as? Int) == 201 }
        }
        XCTAssertEqual(sink.accessLog().map { $0["uri"] as? String }, ["/in/t/a%20b/c../%3Fd/%23e%20f.txt"])
        XCTAssertEqual(try String(contentsOfFile: sink.file("in/t/a b/c../?d/#e f.txt"), encoding: .utf8), "deep")
    }
}
