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

/// Issue #3: files that change under us, a full disk, and retention.
final class SpoolEdgeTests: XCTestCase {
    func testFileModifiedDuringItsUploadIsUploadedAgainFromItsNewContent() throws {
        let sink = try NginxSink()
        // 256 KiB/s makes a 512 KiB upload last about 2 s: time to change the file under it.
        let fx = try SpoolFixture(url: sink.url("{name}"), extra: "max_rate = 256KiB")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        let path = try fx.drop("growing.log", Data(repeating: 0x41, count: 1 << 19))
        try waitUntil(timeout: 10, "the first attempt to start") {
            (try? fx.manifest("growing.log", in: fx.outbox))?.state == .uploading
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("appended while uploading\n".utf8))
        try handle.close()
        let final = try sha256(ofFile: path)
        try waitUntil(timeout: 30, "growing.log and its manifest in sent/") {
            fx.files(in: fx.sent) == ["growing.log"] && (try? fx.manifest("growing.log", in: fx.sent)) != nil
        }
        XCTAssertEqual(try sha256(ofFile: sink.file("growing.log")), final, "the server holds the new content")
        XCTAssertTrue(daemon.stderrText().contains("file changed during upload"), daemon.stderrText())
        let manifest = try fx.manifest("growing.log", in: fx.sent)
        XCTAssertEqual(manifest.sha256, final)
        XCTAssertEqual(manifest.size, (1 << 19) + 25)
    }

    func testFullDiskKeepsTheFileQueuedAndUploadsItOnceThereIsRoom() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{name}"))
        // The spool on a tiny tmpfs made by the test; fail loudly if that is impossible.
        let mount = try ProcessRunner.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", fx.spool])
        XCTAssertEqual(mount.exitCode, 0, "cannot mount a small tmpfs for the ENOSPC test: \(mount.stderr)")
        defer { _ = try? ProcessRunner.run(["umount", "-l", fx.spool]) }
        _ = try fx.tmp.mkdir("spool/outbox")
        try fx.drop("payload.bin", Data(repeating: 9, count: 100_000))
        // Fill the rest of the filesystem so no manifest can be written.
        let filler = fx.spool + "/filler"
        _ = try ProcessRunner.run(["dd", "if=/dev/zero", "of=\(filler)", "bs=4k"])
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        try waitUntil(timeout: 10, "the disk-full warning") { daemon.stderrText().contains("cannot write manifest") }
        XCTAssertTrue(FileManager.default.fileExists(atPath: fx.outbox + "/payload.bin"), "nothing deleted")
        XCTAssertTrue(daemon.stderrText().contains("No space left on device"), daemon.stderrText())
        XCTAssertTrue(daemon.stderrText().contains("payload.bin"))
        XCTAssertEqual(daemon.stderrText().components(separatedBy: "cannot write manifest").count - 1, 1, "logged once per file")
        XCTAssertTrue(daemon.isRunning)
        try FileManager.default.removeItem(atPath: filler)
        try waitUntil(timeout: 20, "payload.bin in sent/ once there is room") { fx.files(in: fx.sent) == ["payload.bin"] }
        XCTAssertEqual(try sha256(ofFile: sink.file("payload.bin")), sha256(of: Data(repeating: 9, count: 100_000)))
    }

    func testKeepSentDeletesOnlyFilesOlderThanTheRetention() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{name}"), extra: "keep_sent = 1d")
        _ = try fx.tmp.mkdir("spool/sent")
        for name in ["old.txt", "fresh.txt"] {
            _ = try fx.tmp.write("spool/sent/" + name, name)
            _ = try fx.tmp.write("spool/sent/" + name + ".manifest.json", "{}")
        }
        let unpaired = try fx.tmp.write("spool/sent/no-manifest.txt", "not ours to judge")
        for path in [fx.sent + "/old.txt", fx.sent + "/old.txt.manifest.json", unpaired] {
            XCTAssertEqual(try ProcessRunner.run(["touch", "-d", "3 days ago", path]).exitCode, 0)
        }
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(fx.names(in: fx.sent), ["fresh.txt", "fresh.txt.manifest.json", "no-manifest.txt"])
    }

    func testKeepSentZeroKeepsEverything() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{name}"))
        _ = try fx.tmp.mkdir("spool/sent")
        _ = try fx.tmp.write("spool/sent/ancient.txt", "x")
        _ = try fx.tmp.write("spool/sent/ancient.txt.manifest.json", "{}")
        _ = try ProcessRunner.run(["touch", "-d", "400 days ago", fx.sent + "/ancient.txt.manifest.json"])
        XCTAssertEqual(try fx.runOnce().exitCode, 0)
        XCTAssertEqual(fx.names(in: fx.sent), ["ancient.txt", "ancient.txt.manifest.json"])
    }
}
