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

/// Issue #3: the daemon is killed with SIGKILL at random moments while uploading to a slow
/// sink, restarted, again and again; at the end nothing is lost and nothing is corrupt.
final class TortureTests: XCTestCase {
    func testKillNineAtRandomMomentsLosesNothing() throws {
        let sink = try NginxSink()
        // max_rate makes every upload take a while, so kills land mid-transfer.
        let fx = try SpoolFixture(url: sink.url("t/{path}"), extra: "max_rate = 3MiB\nconcurrency = 4", global: "log_level = info")
        var generator = SystemRandomNumberGenerator()
        var hashes: [String: String] = [:]
        for i in 0..<300 {
            let size = Int.random(in: 1_000...40_000, using: &generator)
            let data = Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let name = String(format: "file-%03d.bin", i)
            try fx.drop(name, data)
            hashes[name] = sha256(of: data)
        }
        var rounds = 0
        let deadline = Date().addingTimeInterval(60)
        while rounds < 10 && Date() < deadline {
            let daemon = try fx.binary.start(["run", "--config", fx.config], outputDirectory: fx.tmp.path("."))
            // Let it start and get some uploads in flight, then kill it without warning.
            try waitUntil(timeout: 10, "daemon running") { daemon.stderrText().contains("watching outbox") || !daemon.isRunning }
            Thread.sleep(forTimeInterval: Double.random(in: 0.05...0.6, using: &generator))  // the random moment of the kill
            daemon.kill9()
            _ = try daemon.waitForExit(timeout: 10)
            rounds += 1
        }
        XCTAssertGreaterThanOrEqual(rounds, 8)
        // Final run without interruption.
        let final = try fx.runOnce(timeout: 120)
        XCTAssertEqual(final.exitCode, 0, final.stderr)

        XCTAssertEqual(fx.names(in: fx.outbox), [], "everything left the outbox")
        XCTAssertEqual(Set(fx.files(in: fx.sent)), Set(hashes.keys), "every file sits in sent/ under its own name")
        for (name, hash) in hashes {
            XCTAssertEqual(try sha256(ofFile: sink.file("t/" + name)), hash, "bytes on the server for \(name)")
            let manifest = try fx.manifest(name, in: fx.sent)
            XCTAssertEqual(manifest.state, .sent)
            XCTAssertEqual(manifest.sha256, hash)
        }
        // Duplicates: any file uploaded more than once carried the same Idempotency-Key each time.
        var keysByURI: [String: [String]] = [:]
        for entry in sink.accessLog() where (entry["status"] as? Int).map({ (200..<300).contains($0) }) ?? false {
            keysByURI[entry["uri"] as? String ?? "", default: []].append(entry["idempotency_key"] as? String ?? "")
        }
        let duplicates = keysByURI.filter { $0.value.count > 1 }
        for (uri, keys) in duplicates {
            XCTAssertEqual(Set(keys).count, 1, "\(uri) was delivered twice under different Idempotency-Keys: \(keys)")
        }
        print("torture: \(rounds) SIGKILL rounds, \(hashes.count) files, \(duplicates.count) duplicate deliveries (same Idempotency-Key)")
    }

    func testSecondInstanceForTheSameProfileExitsSeventyFiveNamingTheHolder() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{name}"))
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        for args in [["run"], ["run", "--once"]] {
            let second = try fx.run(args, timeout: 10)
            XCTAssertEqual(second.exitCode, 75, second.stderr)
            XCTAssertTrue(second.stderr.contains("pid \(daemon.pid)"), second.stderr)
            XCTAssertEqual(second.stderr.split(separator: "\n").filter { $0.hasPrefix("uploader:") }.count, 1, second.stderr)
        }
    }

    func testTwoProfilesRunInTwoProcesses() throws {
        let sink = try NginxSink()
        let tmp = try TempDir()
        let config = try tmp.write("u.conf", """
            [outbox one]
            spool = one
            url = \(sink.url("one/{name}"))
            [outbox two]
            spool = two
            url = \(sink.url("two/{name}"))
            """)
        _ = try tmp.mkdir("one/outbox")
        _ = try tmp.mkdir("two/outbox")
        _ = try tmp.write("one/outbox/a.txt", "a")
        _ = try tmp.write("two/outbox/b.txt", "b")
        let binary = try UploaderBinary()
        let first = try binary.start(["run", "--config", config, "--profile", "one"], outputDirectory: tmp.path("."))
        defer { _ = first.stop() }
        let second = try binary.run(["run", "--once", "--config", config, "--profile", "two"], timeout: 20)
        XCTAssertEqual(second.exitCode, 0, second.stderr)
        try waitUntil(timeout: 10, "both files on the server") {
            FileManager.default.fileExists(atPath: sink.file("one/a.txt")) && FileManager.default.fileExists(atPath: sink.file("two/b.txt"))
        }
    }
}
