import Foundation
import XCTest
@testable import UploaderSupport

/// One process per spool: a second `uploader run`, or a `run --once` from cron, beside a running
/// daemon exits with 75 and says who holds the spool, touching nothing; the daemon goes on.
final class SecondInstanceTests: XCTestCase {
    func testASecondDaemonAndARunOnceBesideTheDaemonExitWith75AndTheDaemonGoesOn() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{name}"))
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }

        let once = try fx.runOnce(timeout: 30)
        XCTAssertEqual(once.exitCode, 75, once.stderr)
        XCTAssertTrue(once.stderr.contains("is held by another uploader (pid \(daemon.pid)); not starting"), once.stderr)

        let second = try fx.run(["run"], timeout: 30)
        XCTAssertEqual(second.exitCode, 75, second.stderr)
        XCTAssertTrue(second.stderr.contains("is held by another uploader (pid \(daemon.pid))"), second.stderr)

        let data = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try fx.drop("after.bin", data)
        try waitUntil(timeout: 20, "after.bin in sent/") { fx.names(in: fx.sent).contains("after.bin") }
        XCTAssertEqual(try sha256(ofFile: sink.file("after.bin")), sha256(of: data), "the daemon goes on delivering")
        XCTAssertTrue(daemon.isRunning)
    }
}
