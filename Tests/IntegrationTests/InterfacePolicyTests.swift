import Foundation
import XCTest
@testable import UploaderSupport
@testable import UploaderSpool

/// `interfaces` (#14): two namespaces joined by two links; moving the route to the destination
/// to the link not listed pauses the profile with no attempt spent, moving it back delivers all.
final class InterfacePolicyTests: XCTestCase {
    func testARouteByAnInterfaceNotListedPausesWithoutSpendingAttemptsAndMovingItBackDeliversEverything() throws {
        let netns = try Netns()
        try netns.addSecondLinkAndServiceAddress()
        let sink = try NginxSink(host: Netns.serviceAddress, port: 8080, netns: netns.name(.b))
        // Slow enough that uploads are in flight when the route moves.
        let fx = try SpoolFixture(url: sink.url("i/{name}"),
                                  extra: "interfaces = \(netns.interface(.a))\nmax_rate = 512KiB\nconcurrency = 2\nconnect_timeout = 2s",
                                  global: "log_level = info")
        let daemon = try fx.binary.start(["run", "--config", fx.config], outputDirectory: fx.tmp.path("."), prefix: netns.prefix(.a))
        defer { _ = daemon.stop() }
        try waitUntil(timeout: 10, "the daemon to start") { daemon.stderrText().contains("watching outbox") }
        var names: Set<String> = []
        for i in 0..<4 {
            try fx.drop("before-\(i).bin", Data((0..<(512 * 1024)).map { UInt8(truncatingIfNeeded: $0 ^ i) }))
            names.insert("before-\(i).bin")
        }
        try waitUntil(timeout: 10, "an upload in flight") {
            fx.files(in: fx.outbox).contains { (try? fx.manifest($0, in: fx.outbox))?.state == .uploading }
        }

        try netns.routeService(bySecondLink: true)
        try waitUntil(timeout: 10, "the pause to be logged") { daemon.stderrText().contains("interface not allowed") }
        XCTAssertTrue(daemon.stderrText().contains("interface=\(Netns.secondInterfaceA)"), daemon.stderrText())
        try waitUntil(timeout: 10, "status to say interface") {
            try fx.run(["status", "--json"]).stdout.contains("\"paused_reason\": \"interface\"")
        }
        try fx.drop("during.bin", Data(repeating: 1, count: 64 * 1024))
        names.insert("during.bin")
        try waitUntil(timeout: 10, "in-flight uploads to be put back") {
            !fx.files(in: fx.outbox).contains { (try? fx.manifest($0, in: fx.outbox))?.state == .uploading }
        }
        let sentWhilePaused = fx.files(in: fx.sent)
        XCTAssertEqual(fx.names(in: fx.retry), [], "nothing went to retry/")
        for name in fx.files(in: fx.outbox) where FileManager.default.fileExists(atPath: fx.outbox + "/\(name).manifest.json") {
            XCTAssertEqual(try fx.manifest(name, in: fx.outbox).countedAttempts, 0, "\(name) spent an attempt while paused")
        }
        XCTAssertFalse(fx.files(in: fx.outbox).isEmpty, "files wait in the outbox")

        try netns.routeService(bySecondLink: false)
        let back = Date()
        try waitUntil(timeout: 20, "every file delivered") { Set(fx.files(in: fx.sent)) == names }
        print(String(format: "interfaces: route back to everything delivered %.2f s (%d sent before the move)",
                     Date().timeIntervalSince(back), sentWhilePaused.count))
        XCTAssertTrue(daemon.stderrText().contains("allowed interface again; resuming"), daemon.stderrText())
        for name in names {
            XCTAssertEqual(try fx.manifest(name, in: fx.sent).countedAttempts, 1, "\(name): only the successful attempt counts")
        }
    }
}
