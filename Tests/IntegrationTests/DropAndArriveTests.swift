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

/// Issue #2: a file dropped into the outbox, by any usual means, arrives intact and is filed in sent/.
final class DropAndArriveTests: XCTestCase {
    func testFilesDroppedEveryUsualWayArriveIntactAndLandInSent() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("in/{path}"))
        let preexisting = try fx.drop("before-start.bin", Data(repeating: 7, count: 5000))
        var expected: [String: String] = ["before-start.bin": try sha256(ofFile: preexisting)]
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }

        _ = try fx.tmp.mkdir("elsewhere")
        // cp
        let source = try fx.tmp.writeRandom("elsewhere/src.bin", count: 300_000)
        XCTAssertEqual(try ProcessRunner.run(["cp", source, fx.outbox + "/copied.bin"]).exitCode, 0)
        expected["copied.bin"] = try sha256(ofFile: source)
        // echo > f
        XCTAssertEqual(try ProcessRunner.run(["sh", "-c", "echo hello > '\(fx.outbox)/echoed.txt'"]).exitCode, 0)
        expected["echoed.txt"] = sha256(of: Data("hello\n".utf8))
        // mv from another directory
        let moved = try fx.tmp.writeRandom("elsewhere/moved.dat", count: 70_000)
        expected["moved.dat"] = try sha256(ofFile: moved)
        XCTAssertEqual(try ProcessRunner.run(["mv", moved, fx.outbox + "/moved.dat"]).exitCode, 0)
        // hidden temporary name, then rename
        let hidden = try fx.drop(".partial-upload", Data(repeating: 1, count: 1234))
        expected["renamed.bin"] = try sha256(ofFile: hidden)
        XCTAssertEqual(rename(hidden, fx.outbox + "/renamed.bin"), 0)

        // A move is link, fsync, unlink — file first, then manifest: wait for the whole of it.
        try waitUntil(timeout: 20, "every file and manifest in sent/, the outbox empty") {
            Set(fx.files(in: fx.sent)) == Set(expected.keys)
                && expected.keys.allSatisfy { (try? fx.manifest($0, in: fx.sent)) != nil } && fx.names(in: fx.outbox).isEmpty
        }
        for (name, hash) in expected {
            XCTAssertEqual(try sha256(ofFile: sink.file("in/" + name)), hash, "bytes on the server for \(name)")
            XCTAssertEqual(try sha256(ofFile: fx.sent + "/" + name), hash)
            let manifest = try fx.manifest(name, in: fx.sent)
            XCTAssertEqual(manifest.state, .sent)
            XCTAssertEqual(manifest.sha256, hash)
            XCTAssertEqual(manifest.storedAs, "sent/" + name)
            XCTAssertEqual(manifest.remote?.httpStatus, 201)
            XCTAssertEqual(manifest.attempts.count, 1)
            XCTAssertNotNil(manifest.sentAt)
        }
        XCTAssertEqual(fx.names(in: fx.outbox), [], "outbox empty, nothing hidden left behind")
        XCTAssertEqual(fx.names(in: fx.outbox + "/.upl-tmp"), [], "no temporary manifest left behind")
        let json = try fx.manifestJSON("echoed.txt", in: fx.sent)
        XCTAssertEqual(json["content_type"] as? String, "text/plain")
        XCTAssertEqual(json["size"] as? Int, 6)
        XCTAssertTrue(json.keys.contains("next_attempt_at"), "null fields are written, not omitted")
        // Each request carried the manifest id as Idempotency-Key.
        let keys = sink.accessLog().compactMap { $0["idempotency_key"] as? String }
        XCTAssertEqual(Set(keys).count, expected.count, sink.accessLogLines().joined(separator: "\n"))
    }

    func testSlowWriterIsUploadedOnceAndComplete() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{name}"))
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        let path = fx.outbox + "/slow.log"
        // Writes a line every 0.2 s for about 3 s, then closes.
        let writer = try ProcessRunner.run(
            ["sh", "-c", "exec 3>'\(path)'; for i in $(seq 1 15); do echo line-$i >&3; sleep 0.2; done; exec 3>&-"],
            timeout: 30)
        XCTAssertEqual(writer.exitCode, 0)
        try waitUntil(timeout: 15, "slow.log in sent/") { fx.files(in: fx.sent) == ["slow.log"] }
        XCTAssertEqual(try sha256(ofFile: sink.file("slow.log")), try sha256(ofFile: fx.sent + "/slow.log"))
        XCTAssertEqual(try String(contentsOfFile: sink.file("slow.log"), encoding: .utf8).split(separator: "\n").count, 15)
        XCTAssertEqual(sink.accessLog().filter { ($0["uri"] as? String) == "/slow.log" }.count, 1, "uploaded exactly once")
    }

    func testIgnoredNamesAreNeverUploaded() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{name}"), extra: "ignore = *.tmp *.part")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        for name in [".hidden", "download.tmp", "big.part", "orphan.manifest.json"] {
            try fx.drop(name, Data("x".utf8))
        }
        try fx.drop("zz-marker.txt", Data("marker".utf8))
        try waitUntil(timeout: 15, "the marker in sent/") { fx.files(in: fx.sent) == ["zz-marker.txt"] }
        XCTAssertEqual(sink.accessLog().compactMap { $0["uri"] as? String }, ["/zz-marker.txt"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: fx.outbox + "/download.tmp"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: fx.outbox + "/big.part"))
    }

    func testTwoHundredFilesDrainWithRunOnceAndExitZero() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("batch/{path}"), extra: "concurrency = 4")
        var hashes: [String: String] = [:]
        for i in 0..<200 {
            let data = Data((0..<(100 + i * 37)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) })
            let name = String(format: "f%03d.bin", i)
            try fx.drop(name, data)
            hashes[name] = sha256(of: data)
        }
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(fx.files(in: fx.sent).count, 200)
        XCTAssertEqual(fx.names(in: fx.outbox), [])
        for (name, hash) in hashes {
            XCTAssertEqual(try sha256(ofFile: sink.file("batch/" + name)), hash, name)
        }
        XCTAssertTrue(result.stderr.contains("run --once finished"), result.stderr)
    }

    func testRunOnceWithNothingToDoExitsZero() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{name}"))
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(sink.accessLog().count, 0)
    }

    func testOneGibibyteFileUploadsWithFlatMemory() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{name}"), extra: "digest = sha256")
        let path = fx.outbox + "/huge.img"
        // A sparse 1 GiB file with some real data at both ends.
        XCTAssertEqual(try ProcessRunner.run(["truncate", "-s", "1G", path]).exitCode, 0)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.write(contentsOf: Data(repeating: 0xAB, count: 4096))
        try handle.seek(toOffset: (1 << 30) - 4096)
        try handle.write(contentsOf: Data(repeating: 0xCD, count: 4096))
        try handle.close()
        let expected = try sha256(ofFile: path)
        let result = try ProcessRunner.run(["/usr/bin/time", "-f", "maxrss_kib=%M", fx.binary.path, "run", "--once", "--config", fx.config], timeout: 300)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(try sha256(ofFile: sink.file("huge.img")), expected)
        let rss = result.stderr.split(separator: "\n").compactMap { line -> Int? in
            line.hasPrefix("maxrss_kib=") ? Int(line.dropFirst("maxrss_kib=".count)) : nil
        }.first
        XCTAssertNotNil(rss, "GNU time output missing: \(result.stderr.suffix(400))")
        XCTAssertLessThan(rss ?? .max, 64 * 1024, "peak RSS in KiB during a 1 GiB upload")
    }
}
