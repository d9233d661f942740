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

/// Issue #12, on the built binary: the races of the old runner do not come back.
final class OneOwnerCoreTests: XCTestCase {
    /// With `concurrency = 1` one manifest at most says `uploading`, and the server never sees
    /// two uploads overlap: the slot is taken before the attempt is written down, and the next
    /// attempt is written only once the last one's record has been rewritten.
    func testConcurrencyOneNeverHasTwoUploadsAtOnce() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("c1/{name}"), extra: "concurrency = 1\nmax_rate = 2MiB")
        var hashes: [String: String] = [:]
        for i in 0..<8 {
            let data = Data((0..<(192 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ i) })
            try fx.drop("f\(i).bin", data)
            hashes["f\(i).bin"] = sha256(of: data)
        }
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        var mostUploading = 0
        try waitUntil(timeout: 30, poll: 0.005, "every file in sent/") {
            // Records are read one by one, so one pass is no snapshot: a record read as
            // `uploading` may be rewritten before the next is read. Only those still `uploading`
            // when read again after the whole pass count: a record goes from `uploading` to its
            // final state once, so each of them said `uploading` throughout both passes, and
            // any two of them at once.
            let saysUploading = { (name: String) in (try? fx.manifest(name, in: fx.outbox))?.state == .uploading }
            let uploading = fx.files(in: fx.outbox).filter(saysUploading).filter(saysUploading).count
            mostUploading = max(mostUploading, uploading)
            return Set(fx.files(in: fx.sent)) == Set(hashes.keys)
        }
        XCTAssertLessThanOrEqual(mostUploading, 1, "two manifests said uploading at once")
        let spans = sink.accessLog().compactMap { entry -> (start: Double, end: Double)? in
            guard let end = entry["msec"] as? Double, let took = entry["request_time"] as? Double else { return nil }
            return (end - took, end)
        }.sorted { $0.start < $1.start }
        XCTAssertEqual(spans.count, 8)
        for (earlier, later) in zip(spans, spans.dropFirst()) {
            // nginx logs with millisecond resolution.
            XCTAssertLessThanOrEqual(later.start, later.end)
            XCTAssertGreaterThanOrEqual(later.start + 0.002, earlier.end, "two uploads overlapped at the server: \(spans)")
        }
        for (name, hash) in hashes { XCTAssertEqual(try sha256(ofFile: sink.file("c1/" + name)), hash, name) }
    }

    /// SIGTERM while a 4 GiB file is being hashed at claim time: the hash stops, the daemon
    /// exits 0 within `shutdown_grace` + 3 s, and the file is still queued.
    func testSigtermWhileHashingAFourGibibyteFileExitsWithinTheGrace() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("big/{name}"), extra: "shutdown_grace = 1s")
        let path = fx.outbox + "/huge.bin"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil))
        XCTAssertEqual(truncate(path, 4 << 30), 0, "a sparse 4 GiB file")
        let daemon = try fx.startDaemon()
        // Start-up queued it: the claim is hashing now (reading 4 GiB takes about ten seconds here).
        try waitUntil(timeout: 5, "the claim to start") { daemon.stderrText().contains("queued=1") }
        let signalled = Date()
        daemon.terminate()
        let result = try daemon.waitForExit(timeout: 30)
        let took = Date().timeIntervalSince(signalled)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertLessThan(took, 1 + 3, "exited \(took) s after SIGTERM with a 1 s grace")
        XCTAssertTrue(FileManager.default.fileExists(atPath: path), "the file stays in the outbox")
        if let manifest = try? fx.manifest("huge.bin", in: fx.outbox) {
            XCTAssertEqual(manifest.state, .queued)
            XCTAssertEqual(manifest.attempts.count, 0, "no attempt was made")
        }
        XCTAssertEqual(fx.names(in: fx.sent), [])
        XCTAssertEqual(fx.names(in: fx.retry), [])
        XCTAssertTrue(sink.accessLog().isEmpty, "nothing was sent")
    }

    /// The link flaps 50 times at random 20–400 ms intervals while files keep arriving, then
    /// stays up: every file is delivered within 5 s of the last link-up, and `status` says reachable.
    func testALinkFlappingFiftyTimesDeliversEverythingWithinFiveSecondsOfTheLastLinkUp() throws {
        let netns = try Netns()
        let sink = try NginxSink(host: netns.address(.b), port: 8080, netns: netns.name(.b))
        let fx = try SpoolFixture(url: sink.url("flap/{name}"), extra: "concurrency = 4\nconnect_timeout = 2s",
                                  global: "log_level = info")
        let daemon = try fx.binary.start(["run", "--config", fx.config], outputDirectory: fx.tmp.path("."), prefix: netns.prefix(.a))
        defer { _ = daemon.stop() }
        try waitUntil(timeout: 10, "the daemon to start") { daemon.stderrText().contains("watching outbox") }

        var random = SplitMix64(seed: UInt64(getpid()))
        var hashes: [String: String] = [:]
        var dropped = 0
        func dropOne() throws {
            let data = Data((0..<(32 * 1024 + dropped)).map { UInt8(truncatingIfNeeded: $0 ^ dropped) })
            let name = "f\(dropped).bin"
            try fx.drop(name, data)
            hashes[name] = sha256(of: data)
            dropped += 1
        }
        // The flapping itself is the scenario: the link stays down, then up, for random 20–400 ms.
        for _ in 0..<50 {
            try netns.linkDown(.a)
            try dropOne()
            usleep(useconds_t(20_000 + random.next() % 380_000))
            try netns.linkUp(.a)
            try dropOne()
            usleep(useconds_t(20_000 + random.next() % 380_000))
        }
        let lastUp = Date()
        func reachable() throws -> Bool {
            let status = try fx.run(["status", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            let profile = (object?["profiles"] as? [String: Any])?[fx.profile] as? [String: Any]
            return profile?["reachable"] as? Bool == true
        }
        try waitUntil(timeout: 30, "every file delivered and status showing reachable") {
            try Set(fx.files(in: fx.sent)) == Set(hashes.keys) && reachable()
        }
        let took = Date().timeIntervalSince(lastUp)
        print(String(format: "flapping: %d files, all delivered and reachable %.2f s after the last link-up", dropped, took))
        XCTAssertLessThan(took, 5, "delivered and reachable \(took) s after the last link-up")
        for (name, hash) in hashes { XCTAssertEqual(try sha256(ofFile: sink.file("flap/" + name)), hash, name) }
        let outages = daemon.stderrText().components(separatedBy: "destination unreachable; profile paused").count - 1
        let returns = daemon.stderrText().components(separatedBy: "destination reachable again").count - 1
        XCTAssertEqual(outages, returns, "every outage logged once and ended once")
    }

    /// A destination that comes back is used again within 2 s, whatever `concurrency` is: one
    /// outage is one probe sequence, not one per worker (v0.1 waited 13 s here).
    func testAServerBackAfterAShortOutageIsUsedWithinTwoSecondsWithSixteenWorkers() throws {
        let port = try FreePort.next()
        var sink: NginxSink? = try NginxSink(port: port)
        let fx = try SpoolFixture(url: "http://127.0.0.1:\(port)/back/{name}", extra: "concurrency = 16", global: "log_level = info")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        sink?.stop()
        sink = nil
        var hashes: [String: String] = [:]
        for i in 0..<48 {
            let data = Data("file \(i)\n".utf8)
            try fx.drop("f\(i).txt", data)
            hashes["f\(i).txt"] = sha256(of: data)
        }
        try waitUntil(timeout: 10, "the profile to go offline") { daemon.stderrText().contains("destination unreachable; profile paused") }
        // The outage lasts about four seconds, as in the report that found the bug.
        usleep(4_000_000)
        let back = try NginxSink(port: port)
        let restarted = Date()
        try waitUntil(timeout: 30, "every file delivered") { Set(fx.files(in: fx.sent)) == Set(hashes.keys) }
        let took = Date().timeIntervalSince(restarted)
        print(String(format: "server back: last of 48 files delivered %.2f s after nginx restarted", took))
        XCTAssertLessThan(took, 2.5, "the destination was used again \(took) s after it came back")
        let log = daemon.stderrText()
        XCTAssertEqual(log.components(separatedBy: "destination unreachable; profile paused").count - 1, 1, "one line per outage:\n\(log)")
        for (name, hash) in hashes { XCTAssertEqual(try sha256(ofFile: back.file("back/" + name)), hash, name) }
        for name in hashes.keys { XCTAssertEqual(try fx.manifest(name, in: fx.sent).countedAttempts, 1, name) }
    }
}
