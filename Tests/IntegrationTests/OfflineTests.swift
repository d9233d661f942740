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

/// Issue #4: the network goes away under running uploads and comes back; the daemon pauses
/// without spending attempts and resumes by itself within seconds.
final class OfflineTests: XCTestCase {
    func testLinkDownPausesWithoutSpendingAttemptsAndLinkUpResumesBySelf() throws {
        let netns = try Netns()
        let sink = try NginxSink(host: netns.address(.b), port: 8080, netns: netns.name(.b))
        // Slow enough that uploads are in flight when the link drops.
        let fx = try SpoolFixture(url: sink.url("n/{name}"), extra: "max_rate = 512KiB\nconcurrency = 2\nconnect_timeout = 2s",
                                  global: "log_level = info")
        let daemon = try fx.binary.start(["run", "--config", fx.config], outputDirectory: fx.tmp.path("."), prefix: netns.prefix(.a))
        defer { _ = daemon.stop() }
        try waitUntil(timeout: 10, "the daemon to start") { daemon.stderrText().contains("watching outbox") }
        var hashes: [String: String] = [:]
        for i in 0..<4 {
            let data = Data((0..<(512 * 1024)).map { UInt8(truncatingIfNeeded: $0 ^ i) })
            try fx.drop("before-\(i).bin", data)
            hashes["before-\(i).bin"] = sha256(of: data)
        }
        try waitUntil(timeout: 10, "an upload in flight") {
            fx.files(in: fx.outbox).contains { (try? fx.manifest($0, in: fx.outbox))?.state == .uploading }
        }
        try netns.linkDown(.a)
        try waitUntil(timeout: 10, "the profile to go offline") { daemon.stderrText().contains("destination unreachable") }
        for i in 0..<3 {
            let data = Data(repeating: UInt8(i), count: 64 * 1024)
            try fx.drop("during-\(i).bin", data)
            hashes["during-\(i).bin"] = sha256(of: data)
        }
        // Offline: everything stays queued in the outbox, and no attempt is counted.
        try waitUntil(timeout: 10, "in-flight uploads to be put back") {
            !fx.files(in: fx.outbox).contains { (try? fx.manifest($0, in: fx.outbox))?.state == .uploading }
        }
        XCTAssertEqual(fx.names(in: fx.retry), [], "nothing went to retry/")
        for name in fx.files(in: fx.outbox) where FileManager.default.fileExists(atPath: fx.outbox + "/\(name).manifest.json") {
            XCTAssertEqual(try fx.manifest(name, in: fx.outbox).countedAttempts, 0, "\(name) spent an attempt while offline")
        }
        let sentBefore = fx.files(in: fx.sent).count

        try netns.linkUp()
        let up = Date()
        try waitUntil(timeout: 15, "a first upload after link-up") { fx.files(in: fx.sent).count > sentBefore }
        let resumeSeconds = Date().timeIntervalSince(up)
        try waitUntil(timeout: 30, "every file delivered") { Set(fx.files(in: fx.sent)) == Set(hashes.keys) }
        print(String(format: "offline: link-up to first completed upload %.2f s", resumeSeconds))
        XCTAssertLessThan(resumeSeconds, 5, "resumes within seconds of the link coming back")
        for (name, hash) in hashes {
            XCTAssertEqual(try sha256(ofFile: sink.file("n/" + name)), hash, name)
            XCTAssertEqual(try fx.manifest(name, in: fx.sent).countedAttempts, 1, "\(name): only the successful attempt counts")
        }
        XCTAssertTrue(daemon.stderrText().contains("destination reachable again"), daemon.stderrText())
    }
}
