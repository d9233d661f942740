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

/// Issue #6: whatever lands in the outbox that is not a plain file — symlinks, FIFOs,
/// sockets, devices, directories — is never followed, never blocks the daemon, and is
/// named in exactly one warning line, while the other files keep flowing.
final class HostileOutboxEntriesTests: XCTestCase {
    /// Lines saying `name` is not uploaded (the refusal warning ends with `file=NAME`).
    private func refusals(_ log: String, _ name: String) -> [String] {
        HostileFiles.lines(log, "not uploaded").filter { $0.hasSuffix(" file=\(name)") }
    }

    private func uris(_ sink: NginxSink) -> [String] { sink.accessLog().compactMap { $0["uri"] as? String }.sorted() }

    func testSymlinksAreNeverFollowedNeverUploadedAndEachIsNamedInOneWarning() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{path}"))
        let secret = try fx.tmp.write("elsewhere/secret.txt", "SECRET-CONTENT-NEVER-UPLOADED")
        _ = try fx.tmp.mkdir("elsewhere/dir")
        // One before start (found by the start-up scan), the others while the daemon watches.
        try HostileFiles.symlink("/etc/shadow", at: fx.outbox + "/to-shadow")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        try HostileFiles.symlink(secret, at: fx.outbox + "/to-elsewhere.txt")
        try HostileFiles.symlink(fx.tmp.path("elsewhere/dir"), at: fx.outbox + "/to-dir")
        try HostileFiles.symlink("/nonexistent/dangling", at: fx.outbox + "/dangling")
        // A symlink renamed into the outbox (IN_MOVED_TO) is refused the same way.
        try HostileFiles.symlink(secret, at: fx.tmp.path("elsewhere/moved-link"))
        XCTAssertEqual(rename(fx.tmp.path("elsewhere/moved-link"), fx.outbox + "/moved-link"), 0)
        let links = ["to-shadow", "to-elsewhere.txt", "to-dir", "dangling", "moved-link"]
        try waitUntil(timeout: 15, "a refusal for every symlink") {
            links.allSatisfy { !refusals(daemon.stderrText(), $0).isEmpty }
        }
        // The same name appearing again is not reported again.
        XCTAssertEqual(unlink(fx.outbox + "/dangling"), 0)
        try HostileFiles.symlink("/nonexistent/again", at: fx.outbox + "/dangling")
        try fx.drop("zz-marker.txt", Data("marker".utf8))
        try waitUntil(timeout: 15, "the marker in sent/") { fx.files(in: fx.sent) == ["zz-marker.txt"] }

        let log = daemon.stderrText()
        for link in links {
            XCTAssertEqual(refusals(log, link).count, 1, "exactly one warning for \(link):\n\(log)")
            XCTAssertTrue(refusals(log, link)[0].contains("WARN not uploaded: symlink, never followed"), refusals(log, link)[0])
            var st = stat()
            XCTAssertEqual(lstat(fx.outbox + "/" + link, &st), 0)
            XCTAssertEqual(st.st_mode & S_IFMT, S_IFLNK, "\(link) left as it is")
            XCTAssertFalse(HostileFiles.exists(fx.outbox + "/" + link + ".manifest.json"), "no manifest for \(link)")
        }
        XCTAssertEqual(uris(sink), ["/zz-marker.txt"], "only the marker reached the server")
        XCTAssertEqual(fx.names(in: fx.sent), ["zz-marker.txt", "zz-marker.txt.manifest.json"])
        XCTAssertEqual(fx.names(in: fx.retry), [])
        let status = try fx.run(["status", "--json"])
        let json = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let profile = (json?["profiles"] as? [String: Any])?["t"] as? [String: Any]
        XCTAssertEqual((profile?["refused"] as? [String: Any])?["files"] as? Int, links.count, status.stdout)
        XCTAssertEqual((profile?["queued"] as? [String: Any])?["files"] as? Int, 0, status.stdout)
    }

    func testFifoSocketAndDeviceNodeNeverBlockTheDaemonAndOtherFilesKeepFlowing() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{path}"), extra: "concurrency = 1")
        try HostileFiles.fifo(at: fx.outbox + "/pipe-before")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        try HostileFiles.fifo(at: fx.outbox + "/pipe")
        try HostileFiles.socket(at: fx.outbox + "/sock")
        try HostileFiles.nullDevice(at: fx.outbox + "/null-dev")
        let expected = ["pipe-before": "FIFO", "pipe": "FIFO", "sock": "socket", "null-dev": "character device"]
        try waitUntil(timeout: 15, "a refusal for every special file") {
            expected.keys.allSatisfy { !refusals(daemon.stderrText(), $0).isEmpty }
        }
        var hashes: [String: String] = [:]
        for i in 0..<3 {
            let data = Data((0..<(1000 * (i + 1))).map { UInt8(truncatingIfNeeded: $0 * 7 + i) })
            try fx.drop("after-\(i).bin", data)
            hashes["after-\(i).bin"] = sha256(of: data)
        }
        try waitUntil(timeout: 15, "the regular files in sent/") { Set(fx.files(in: fx.sent)) == Set(hashes.keys) }
        let log = daemon.stderrText()
        for (name, kind) in expected {
            XCTAssertEqual(refusals(log, name).count, 1, "one warning for \(name):\n\(log)")
            XCTAssertTrue(refusals(log, name).first?.contains("not uploaded: \(kind), not a regular file") ?? false, log)
            XCTAssertTrue(HostileFiles.exists(fx.outbox + "/" + name), "\(name) left in place")
        }
        for (name, hash) in hashes { XCTAssertEqual(try sha256(ofFile: sink.file(name)), hash) }
        XCTAssertEqual(uris(sink), hashes.keys.map { "/" + $0 }.sorted())
        XCTAssertTrue(daemon.isRunning)
    }

    func testADirectoryInANonRecursiveOutboxIsIgnoredWithOneWarning() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{path}"))
        _ = try fx.tmp.write("spool/outbox/before/inside.txt", "not uploaded")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        _ = try fx.tmp.write("elsewhere/moved-dir/inside.txt", "not uploaded either")
        XCTAssertEqual(rename(fx.tmp.path("elsewhere/moved-dir"), fx.outbox + "/moved-dir"), 0)
        _ = try fx.tmp.mkdir("spool/outbox/made-here")
        _ = try fx.tmp.write("spool/outbox/made-here/inside.txt", "nor this")
        try fx.drop("zz-marker.txt", Data("marker".utf8))
        try waitUntil(timeout: 15, "the marker in sent/") { fx.files(in: fx.sent) == ["zz-marker.txt"] }
        try waitUntil(timeout: 5, "a warning for each directory") {
            ["before", "moved-dir", "made-here"].allSatisfy {
                !HostileFiles.lines(daemon.stderrText(), "directory in a non-recursive outbox ignored", "file=\($0)").isEmpty
            }
        }
        let log = daemon.stderrText()
        for dir in ["before", "moved-dir", "made-here"] {
            let warnings = HostileFiles.lines(log, "WARN directory in a non-recursive outbox ignored").filter { $0.hasSuffix("file=\(dir)") }
            XCTAssertEqual(warnings.count, 1, log)
            XCTAssertTrue(HostileFiles.exists(fx.outbox + "/" + dir + "/inside.txt"))
        }
        XCTAssertEqual(uris(sink), ["/zz-marker.txt"])
    }

    func testARecursiveOutboxUploadsTheFilesOfDirectoriesKeepingTheirPathsInSent() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("in/{path}"), extra: "recursive = yes")
        _ = try fx.tmp.write("spool/outbox/before/a.txt", "a")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        _ = try fx.tmp.write("elsewhere/tree/inner/b.txt", "b")
        _ = try fx.tmp.write("elsewhere/tree/c.txt", "c")
        XCTAssertEqual(rename(fx.tmp.path("elsewhere/tree"), fx.outbox + "/tree"), 0)
        _ = try fx.tmp.mkdir("spool/outbox/live")
        try waitUntil(timeout: 10, "the new directory watched") {
            daemon.stderrText().contains("dir=\(fx.outbox)/live")
        }
        _ = try fx.tmp.write("spool/outbox/live/d.txt", "d")
        let expected = ["before/a.txt": "a", "tree/inner/b.txt": "b", "tree/c.txt": "c", "live/d.txt": "d"]
        try waitUntil(timeout: 20, "every file in sent/ under its path") {
            expected.keys.allSatisfy { FileManager.default.fileExists(atPath: fx.sent + "/" + $0 + ".manifest.json") }
        }
        for (path, content) in expected {
            XCTAssertEqual(try String(contentsOfFile: sink.file("in/" + path), encoding: .utf8), content)
            XCTAssertEqual(try String(contentsOfFile: fx.sent + "/" + path, encoding: .utf8), content)
            let manifest = try Manifest.decode(Data(contentsOf: URL(fileURLWithPath: fx.sent + "/" + path + ".manifest.json")))
            XCTAssertEqual(manifest.path, path)
            XCTAssertEqual(manifest.storedAs, "sent/" + path)
            XCTAssertEqual(manifest.state, .sent)
        }
        XCTAssertEqual(uris(sink), expected.keys.map { "/in/" + $0 }.sorted())
    }

    /// Time of check to time of use: the file is swapped for a symlink to a secret while its
    /// upload runs. The bytes sent are the original file's (one descriptor, opened with
    /// O_NOFOLLOW), the secret is never read, and the symlink is then refused.
    func testAFileSwappedForASymlinkDuringItsUploadNeverSendsTheLinkTarget() throws {
        let server = try FaultServer()
        try server.script([["slow_body_bytes_per_sec": 100_000]])
        let fx = try SpoolFixture(url: server.url("{path}"), extra: "concurrency = 1")
        let secret = try fx.tmp.write("elsewhere/secret.txt", Data(repeating: 0x53, count: 300_000))
        let original = try fx.tmp.writeRandom("elsewhere/victim.bin", count: 300_000)
        let originalHash = try sha256(ofFile: original)
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        XCTAssertEqual(rename(original, fx.outbox + "/victim.bin"), 0)
        try waitUntil(timeout: 10, "the upload to begin") {
            (try? fx.manifest("victim.bin", in: fx.outbox).state) == .uploading
        }
        XCTAssertEqual(rename(fx.outbox + "/victim.bin", fx.tmp.path("elsewhere/victim-away.bin")), 0)
        try HostileFiles.symlink(secret, at: fx.outbox + "/victim.bin")
        try waitUntil(timeout: 20, "the swapped-in symlink refused") {
            refusals(daemon.stderrText(), "victim.bin").count == 1
        }
        try fx.drop("zz-marker.txt", Data("marker".utf8))
        try waitUntil(timeout: 15, "the marker in sent/") { fx.files(in: fx.sent) == ["zz-marker.txt"] }

        let requests = try server.requests()
        let victim = requests.filter { ($0["path"] as? String) == "/victim.bin" }
        XCTAssertEqual(victim.count, 1, "sent once, not again through the symlink")
        XCTAssertEqual(victim.first?["body_sha256"] as? String, originalHash, "the original bytes, from the open descriptor")
        let secretHash = try sha256(ofFile: secret)
        XCTAssertFalse(requests.contains { ($0["body_sha256"] as? String) == secretHash }, "the link target never left the machine")
        let log = daemon.stderrText()
        XCTAssertEqual(HostileFiles.lines(log, "file changed during upload; uploading it again", "file=victim.bin").count, 1, log)
        XCTAssertTrue(refusals(log, "victim.bin")[0].contains("symlink, never followed"))
        XCTAssertFalse(HostileFiles.exists(fx.outbox + "/victim.bin.manifest.json"), "no manifest left beside the symlink")
        XCTAssertTrue(daemon.isRunning)
    }
}
