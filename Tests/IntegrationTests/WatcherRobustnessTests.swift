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

/// Issue #3: the watcher keeps up with everything the kernel can do to an outbox.
final class WatcherRobustnessTests: XCTestCase {
    func testFileHardLinkedIntoTheOutboxIsPickedUp() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{name}"))
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        // sftp-server finishes uploads with link(): CREATE, and no OPEN or CLOSE_WRITE.
        let source = try fx.tmp.writeRandom("staging.bin", count: 10_000)
        XCTAssertEqual(link(source, fx.outbox + "/linked.bin"), 0)
        XCTAssertEqual(unlink(source), 0)
        try waitUntil(timeout: 15, "linked.bin in sent/") { fx.files(in: fx.sent) == ["linked.bin"] }
        XCTAssertEqual(try sha256(ofFile: sink.file("linked.bin")), try sha256(ofFile: fx.sent + "/linked.bin"))
    }

    func testRecursiveOutboxUploadsNewSubdirectoriesAndKeepsPathsInSent() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("r/{path}"), extra: "recursive = yes")
        _ = try fx.tmp.mkdir("spool/outbox/early/deeper")
        try fx.drop("early/deeper/one.txt", Data("one".utf8))
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        // A new directory, then a file in it at once (the watch is added on CREATE and the
        // directory scanned, so the file is found either way); and a whole tree moved in.
        XCTAssertEqual(mkdir(fx.outbox + "/late", 0o755), 0)
        XCTAssertTrue(FileManager.default.createFile(atPath: fx.outbox + "/late/two.txt", contents: Data("two".utf8)))
        _ = try fx.tmp.mkdir("tree/x/y")
        _ = try fx.tmp.write("tree/x/y/moved.txt", "moved")
        XCTAssertEqual(rename(fx.tmp.path("tree/x"), fx.outbox + "/x"), 0)
        try waitUntil(timeout: 20, "all three in sent/ under their paths") {
            ["early/deeper/one.txt", "late/two.txt", "x/y/moved.txt"].allSatisfy {
                FileManager.default.fileExists(atPath: fx.sent + "/" + $0)
            }
        }
        XCTAssertEqual(try String(contentsOfFile: sink.file("r/x/y/moved.txt"), encoding: .utf8), "moved")
        XCTAssertEqual(try String(contentsOfFile: sink.file("r/early/deeper/one.txt"), encoding: .utf8), "one")
        XCTAssertEqual(try fx.manifest("late/two.txt", in: fx.sent).storedAs, "sent/late/two.txt")
        XCTAssertEqual(try fx.manifest("late/two.txt", in: fx.sent).path, "late/two.txt")
    }

    func testQueueOverflowTriggersAFullRescanAndNothingIsMissed() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("o/{name}"), global: "log_level = info")
        // A tiny kernel event queue for the daemon's inotify instance only (read at inotify_init).
        let knob = "/proc/sys/fs/inotify/max_queued_events"
        let original = try String(contentsOfFile: knob, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        try "16".write(toFile: knob, atomically: false, encoding: .utf8)
        let daemon: RunningProcess
        do {
            daemon = try fx.startDaemon()
        } catch {
            try original.write(toFile: knob, atomically: false, encoding: .utf8)
            throw error
        }
        try original.write(toFile: knob, atomically: false, encoding: .utf8)
        defer { _ = daemon.stop() }
        // Stopped, the daemon reads no events: 300 files make far more than 16, so the kernel
        // drops events and reports IN_Q_OVERFLOW when the daemon continues.
        daemon.send(SIGSTOP)
        for i in 0..<300 { try fx.drop(String(format: "burst-%03d.txt", i), Data(repeating: UInt8(i & 0xFF), count: 2048)) }
        daemon.send(SIGCONT)
        try waitUntil(timeout: 60, "all 300 in sent/") { fx.files(in: fx.sent).count == 300 }
        XCTAssertTrue(daemon.stderrText().contains("inotify queue overflowed"), "the overflow really happened")
        XCTAssertEqual(Set(sink.accessLog().compactMap { $0["uri"] as? String }).count, 300)
    }

    func testOutboxRemovedWhileRunningIsRecreatedAndWatchedAgain() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{name}"))
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        try FileManager.default.removeItem(atPath: fx.outbox)
        try waitUntil(timeout: 10, "the outbox recreated") { FileManager.default.fileExists(atPath: fx.outbox) }
        try waitUntil(timeout: 10, "the warning") { daemon.stderrText().contains("outbox was removed or replaced") }
        try fx.drop("after.txt", Data("after".utf8))
        try waitUntil(timeout: 10, "after.txt in sent/") { fx.files(in: fx.sent) == ["after.txt"] }
    }

    func testAnOutboxThatCannotBeRecreatedIsSaidOnceUntilItIsBack() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{name}"))
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        // A file takes the outbox's name in one step (the directory moves to `outbox.old`).
        let spool = (fx.outbox as NSString).deletingLastPathComponent
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: spool + "/outbox.old"))
        try FileSystem.exchange(RelativePath("outbox"), in: spool, with: RelativePath("outbox.old"), in: spool)
        let said = "outbox was removed and cannot be recreated"
        try waitUntil(timeout: 10, "the error line") { daemon.stderrText().contains(said) }
        XCTAssertTrue(daemon.stderrText().contains("Not a directory (errno 20)"), daemon.stderrText())
        try FileManager.default.removeItem(atPath: fx.outbox)
        try waitUntil(timeout: 10, "the outbox recreated") { daemon.stderrText().contains("outbox was removed or replaced") }
        XCTAssertEqual(daemon.stderrText().components(separatedBy: said).count - 1, 1, "said once, though tried each second")
        try fx.drop("after.txt", Data("after".utf8))
        try waitUntil(timeout: 10, "after.txt in sent/") { fx.files(in: fx.sent) == ["after.txt"] }
    }

    func testPeriodicRescanFindsFilesInotifyNeverSaw() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{name}"), extra: "rescan = 1s")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        // A filesystem mounted over the spool after start, as a network share may be: the
        // watch stays on the old directory and sees nothing; only the rescan can find files.
        XCTAssertEqual(try ProcessRunner.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", fx.spool]).exitCode, 0,
                       "tmpfs mount (needs root)")
        defer { _ = try? ProcessRunner.run(["umount", "-l", fx.spool]) }
        for dir in ["outbox", "sent", "retry"] { XCTAssertEqual(mkdir(fx.spool + "/" + dir, 0o750), 0) }
        try fx.drop("unseen.txt", Data("only a rescan finds me".utf8))
        try waitUntil(timeout: 15, "unseen.txt in sent/") { fx.files(in: fx.sent) == ["unseen.txt"] }
        XCTAssertEqual(try String(contentsOfFile: sink.file("unseen.txt"), encoding: .utf8), "only a rescan finds me")
    }
}
