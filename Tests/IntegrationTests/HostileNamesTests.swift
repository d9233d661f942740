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

/// Issue #6: file names are bytes chosen by someone else. Each odd name is uploaded (or
/// refused with a reason), percent-encoded in the URL, and logged without breaking the line.
final class HostileNamesTests: XCTestCase {
    static let quoted = "quote\"s 'and' \\back.txt"
    static let invalidUTF8: [UInt8] = [0x66, 0xFF, 0xFE, 0x2E, 0x62, 0x69, 0x6E]  // "f\xFF\xFE.bin"
    static let longName = String(repeating: "L", count: 251) + ".txt"  // 255 bytes: its sidecar cannot exist

    /// Names that upload, as bytes, with the request URI nginx must log for each.
    static var uploaded: [(name: [UInt8], uri: String)] {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        func encoded(_ s: String) -> String { "/" + s.addingPercentEncoding(withAllowedCharacters: unreserved)! }
        let texts = ["with space.txt", quoted, "-leading-dash.txt", "new\nline.txt", "tab\there.txt",
                     "ünïcödé-日本.txt", "x.manifest.json.bak", "\u{1B}[31mred\u{1B}[0m\r.txt"]
        return texts.map { (Array($0.utf8), encoded($0)) } + [(invalidUTF8, "/f%FF%FE.bin")]
    }

    private func drop(_ fx: SpoolFixture) throws -> [[UInt8]: String] {
        var hashes: [[UInt8]: String] = [:]
        for (i, entry) in Self.uploaded.enumerated() {
            let data = Data("content \(i) of \(RelativePath(bytes: entry.name).logSafe)\n".utf8)
            try HostileFiles.write(data, name: entry.name, in: fx.outbox)
            hashes[entry.name] = sha256(of: data)
        }
        try fx.drop(Self.longName, Data("long".utf8))
        try fx.drop("x.manifest.json", Data("not a manifest, just a file with a reserved suffix".utf8))
        return hashes
    }

    private func checkDelivered(_ hashes: [[UInt8]: String], sink: NginxSink, fx: SpoolFixture) throws {
        XCTAssertEqual(Set(sink.accessLog().compactMap { $0["uri"] as? String }), Set(Self.uploaded.map(\.uri)),
                       sink.accessLogLines().joined(separator: "\n"))
        for (name, hash) in hashes {
            let shown = RelativePath(bytes: name).logSafe
            XCTAssertEqual(try HostileFiles.sha256(name: name, in: sink.root), hash, "bytes on the server for \(shown)")
            XCTAssertEqual(try HostileFiles.sha256(name: name, in: fx.sent), hash, "bytes in sent/ for \(shown)")
            let manifestBytes = try FileSystem.readAll(RelativePath(bytes: name + Array(".manifest.json".utf8)), in: fx.sent)
            let manifest = try Manifest.decode(Data(manifestBytes))
            XCTAssertEqual(manifest.state, .sent, shown)
            XCTAssertEqual(manifest.sha256, hash, shown)
        }
        // The name that is not UTF-8: U+FFFD in `path`, the exact bytes in `path_base64`.
        let raw = try FileSystem.readAll(RelativePath(bytes: Self.invalidUTF8 + Array(".manifest.json".utf8)), in: fx.sent)
        let json = try JSONSerialization.jsonObject(with: Data(raw)) as? [String: Any]
        XCTAssertEqual(json?["path"] as? String, "f\u{FFFD}\u{FFFD}.bin")
        XCTAssertEqual(json?["path_base64"] as? String, Data(Self.invalidUTF8).base64EncodedString())
        XCTAssertEqual(json?["stored_as"] as? String, "sent/f\u{FFFD}\u{FFFD}.bin")
        // Refused and ignored names stay where they are.
        XCTAssertTrue(HostileFiles.exists(fx.outbox + "/" + Self.longName))
        XCTAssertTrue(HostileFiles.exists(fx.outbox + "/x.manifest.json"))
        XCTAssertEqual(HostileFiles.names(in: fx.outbox), [Array(Self.longName.utf8), Array("x.manifest.json".utf8)])
    }

    func testOddNamesUploadPercentEncodedAndEveryJSONLogLineStaysValidJSON() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{path}"), global: "log_level = debug\nlog_format = json")
        let daemon = try fx.startDaemon()
        let hashes = try drop(fx)
        try waitUntil(timeout: 20, "every uploadable name in sent/") {
            HostileFiles.names(in: fx.sent).count == 2 * Self.uploaded.count
        }
        let status = try fx.run(["status", "--json"])
        let result = daemon.stop()
        XCTAssertEqual(result?.exitCode, 0)
        try checkDelivered(hashes, sink: sink, fx: fx)

        var objects: [[String: Any]] = []
        for line in daemon.stderrText().split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
                XCTFail("not a JSON object: \(line)"); continue
            }
            objects.append(object)
        }
        let sentFiles = Set(objects.filter { $0["msg"] as? String == "sent" }.compactMap { $0["file"] as? String })
        XCTAssertEqual(sentFiles, Set(["with space.txt", Self.quoted.replacingOccurrences(of: "\\", with: "\\\\"),
                                       "-leading-dash.txt", "new\\nline.txt", "tab\\there.txt", "ünïcödé-日本.txt",
                                       "x.manifest.json.bak", "\\x1B[31mred\\x1B[0m\\r.txt", "f\u{FFFD}\u{FFFD}.bin"]))
        let tooLong = objects.filter { ($0["msg"] as? String)?.contains("name too long") == true }
        XCTAssertEqual(tooLong.count, 1, "reported once")
        XCTAssertEqual(tooLong.first?["file"] as? String, Self.longName)
        let json = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let profile = (json?["profiles"] as? [String: Any])?["t"] as? [String: Any]
        XCTAssertEqual((profile?["refused"] as? [String: Any])?["files"] as? Int, 1, "the long name, counted in status")
        XCTAssertEqual((profile?["queued"] as? [String: Any])?["files"] as? Int, 0, status.stdout)
    }

    func testOddNamesInTextLogsKeepOneEntryPerLineAndTheLongNameIsReportedOncePerStart() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{path}"))
        let hashes = try drop(fx)
        let first = try fx.runOnce()
        XCTAssertEqual(first.exitCode, 0, first.stderr)
        try checkDelivered(hashes, sink: sink, fx: fx)
        let stamp = try Regex("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z (ERROR|WARN|INFO|DEBUG) ")
        for line in first.stderr.split(separator: "\n") {
            XCTAssertNotNil(String(line).firstMatch(of: stamp), "a log line broken in two: \(line)")
        }
        XCTAssertFalse(first.stderr.contains("\u{1B}"), "no raw escape sequence reaches the terminal")
        XCTAssertFalse(first.stderr.contains("\r"))
        XCTAssertEqual(HostileFiles.lines(first.stderr, "INFO sent ", "file=new\\nline.txt ").count, 1, first.stderr)
        XCTAssertEqual(HostileFiles.lines(first.stderr, "INFO sent ", "file=tab\\there.txt ").count, 1, first.stderr)
        XCTAssertEqual(HostileFiles.lines(first.stderr, "INFO sent ", "file=\\x1B[31mred\\x1B[0m\\r.txt ").count, 1, first.stderr)
        XCTAssertEqual(HostileFiles.lines(first.stderr, "INFO sent ", "file=\"\(Self.quoted.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\"").count, 1, first.stderr)
        // Each start reports the name that cannot be claimed once, and leaves it in place.
        let tooLong = HostileFiles.lines(first.stderr, "WARN not uploaded: name too long", "file=\(Self.longName)")
        XCTAssertEqual(tooLong.count, 1, first.stderr)
        let second = try fx.runOnce()
        XCTAssertEqual(second.exitCode, 0, second.stderr)
        XCTAssertEqual(HostileFiles.lines(second.stderr, "WARN not uploaded: name too long", "file=\(Self.longName)").count, 1)
        XCTAssertTrue(HostileFiles.exists(fx.outbox + "/" + Self.longName))
        let status = try fx.run(["status"])
        XCTAssertTrue(status.stdout.contains("refused     1 file:"), status.stdout)
    }
}
