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

/// Issue #3: every intermediate state a crash can leave on disk, laid out by hand, is
/// recovered by the next `run --once` with nothing lost and nothing uploaded needlessly.
final class RecoveryTests: XCTestCase {
    private var sink: NginxSink!
    private var fx: SpoolFixture!

    override func setUpWithError() throws {
        sink = try NginxSink()
        fx = try SpoolFixture(url: sink.url("{path}"))
        _ = try fx.tmp.mkdir("spool/sent")
        _ = try fx.tmp.mkdir("spool/retry")
    }

    /// XCTest keeps every test case object until the process ends, so what `setUp` made is
    /// let go here: the spool's temporary directory goes now, not never.
    override func tearDown() {
        sink?.stop()
        sink = nil
        fx?.tmp.remove()
        fx = nil
    }

    /// A manifest for `name` as the daemon would have written it for `data`.
    private func manifest(_ name: String, _ data: Data, state: Manifest.State, in dir: String) throws -> Manifest {
        let status = try FileSystem.status(path: dir + "/" + name)
        return Manifest(id: UUID().uuidString.lowercased(), profile: fx.profile, path: RelativePath(name), size: Int64(data.count),
                        mtime: status.mtimeText, sha256: sha256(of: data), contentType: "application/octet-stream",
                        state: state, createdAt: Timestamp.format(Date()))
    }

    private func write(_ manifest: Manifest, for name: String, in dir: String) throws {
        try Data(manifest.encodedLine()).write(to: URL(fileURLWithPath: dir + "/" + name + ".manifest.json"))
    }

    private func put(_ name: String, _ data: Data, in dir: String) throws {
        XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/" + name, contents: data))
    }

    private func uploads() -> [String] { sink.accessLog().compactMap { $0["uri"] as? String } }

    func testUploadingManifestIsRequeuedWithTheCutAttemptMarkedInterrupted() throws {
        let data = Data("cut short".utf8)
        try put("a.txt", data, in: fx.outbox)
        var m = try manifest("a.txt", data, state: .uploading, in: fx.outbox)
        m.attempts = [Manifest.Attempt(startedAt: Timestamp.format(Date().addingTimeInterval(-5)))]
        try write(m, for: "a.txt", in: fx.outbox)

        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let after = try fx.manifest("a.txt", in: fx.sent)
        XCTAssertEqual(after.id, m.id, "the same id, so the same Idempotency-Key")
        XCTAssertEqual(after.state, .sent)
        XCTAssertEqual(after.attempts.count, 2)
        XCTAssertEqual(after.attempts[0].interrupted, true)
        XCTAssertNotNil(after.attempts[0].endedAt)
        XCTAssertEqual(after.countedAttempts, 1)
        XCTAssertEqual(sink.accessLog().first?["idempotency_key"] as? String, m.id)
        XCTAssertEqual(try sha256(ofFile: sink.file("a.txt")), sha256(of: data))
    }

    func testSentManifestWithFileStillInOutboxFinishesTheMoveWithoutUploading() throws {
        let data = Data("already delivered".utf8)
        try put("b.txt", data, in: fx.outbox)
        var m = try manifest("b.txt", data, state: .sent, in: fx.outbox)
        m.storedAs = "sent/b.txt"
        try write(m, for: "b.txt", in: fx.outbox)

        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(fx.names(in: fx.outbox), [])
        XCTAssertEqual(fx.names(in: fx.sent), ["b.txt", "b.txt.manifest.json"])
        XCTAssertEqual(try fx.manifest("b.txt", in: fx.sent).id, m.id)
        XCTAssertEqual(uploads(), [], "not uploaded again")
    }

    func testFileMovedButManifestNotIsPairedUp() throws {
        let data = Data("moved first".utf8)
        try put("c.txt", data, in: fx.sent)
        var m = try manifest("c.txt", data, state: .sent, in: fx.sent)
        m.storedAs = "sent/c.txt"
        try write(m, for: "c.txt", in: fx.outbox)

        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(fx.names(in: fx.outbox), [])
        XCTAssertEqual(fx.names(in: fx.sent), ["c.txt", "c.txt.manifest.json"])
        XCTAssertEqual(uploads(), [])
    }

    func testManifestWithNoFileIsRecordedAsideAndNothingCrashes() throws {
        let data = Data("gone".utf8)
        try put("d.txt", data, in: fx.outbox)
        let m = try manifest("d.txt", data, state: .queued, in: fx.outbox)
        try write(m, for: "d.txt", in: fx.outbox)
        try FileManager.default.removeItem(atPath: fx.outbox + "/d.txt")

        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(fx.names(in: fx.outbox), [])
        let aside = fx.names(in: fx.spool + "/.quarantine")
        XCTAssertEqual(aside.count, 1)
        XCTAssertTrue(aside.first?.hasPrefix("d.txt.manifest.json.") ?? false, "\(aside)")
        XCTAssertTrue(result.stderr.contains("manifest with no file"), result.stderr)
    }

    func testHalfWrittenTemporaryManifestIsDiscardedAndTheFileClaimedAgain() throws {
        let data = Data("claim me".utf8)
        try put("e.txt", data, in: fx.outbox)
        try put(".upl-tmp-ABCDEF123", Data("{\"version\": 1, \"id\":".utf8), in: fx.outbox)
        _ = try fx.tmp.mkdir("spool/outbox/.upl-tmp")
        try put(".upl-tmp-0123abcd", Data("{\"version\": 1, \"id\":".utf8), in: fx.outbox + "/.upl-tmp")

        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(fx.names(in: fx.outbox), [])
        XCTAssertEqual(fx.files(in: fx.sent), ["e.txt"])
        XCTAssertEqual(fx.names(in: fx.outbox + "/.upl-tmp"), [], "leftovers in the temporary directory removed too")
        XCTAssertEqual(try sha256(ofFile: sink.file("e.txt")), sha256(of: data))
    }

    func testCorruptManifestIsMovedAsideNeverDeletedAndTheFileClaimedAfresh() throws {
        let data = Data("fresh claim".utf8)
        try put("f.txt", data, in: fx.outbox)
        try put("f.txt.manifest.json", Data("{not json at all".utf8), in: fx.outbox)

        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(fx.files(in: fx.sent), ["f.txt"])
        let aside = fx.names(in: fx.spool + "/.quarantine")
        XCTAssertEqual(aside.count, 1)
        XCTAssertEqual(try String(contentsOfFile: fx.spool + "/.quarantine/" + aside[0], encoding: .utf8), "{not json at all")
        XCTAssertTrue(result.stderr.contains("unreadable manifest moved aside"), result.stderr)
    }

    func testQueuedManifestWhoseFileIsStillInRetryBringsTheFileBack() throws {
        let data = Data("coming back".utf8)
        try put("g.txt", data, in: fx.retry)
        var m = try manifest("g.txt", data, state: .queued, in: fx.retry)
        m.storedAs = "retry/g.txt"
        m.attempts = [Manifest.Attempt(startedAt: Timestamp.format(Date()), endedAt: Timestamp.format(Date()), httpStatus: 503,
                                       error: "HTTP 503 Service Unavailable", retryable: true)]
        try write(m, for: "g.txt", in: fx.outbox)

        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(fx.names(in: fx.retry), [])
        let after = try fx.manifest("g.txt", in: fx.sent)
        XCTAssertEqual(after.id, m.id)
        XCTAssertEqual(after.attempts.count, 2, "history kept")
        XCTAssertEqual(try sha256(ofFile: sink.file("g.txt")), sha256(of: data))
    }

    func testRetryManifestWithFileInOutboxFinishesTheMoveToRetry() throws {
        let data = Data("to retry".utf8)
        try put("h.txt", data, in: fx.outbox)
        var m = try manifest("h.txt", data, state: .retry, in: fx.outbox)
        m.storedAs = "retry/h.txt"
        m.nextAttemptAt = Timestamp.format(Date().addingTimeInterval(3600))
        try write(m, for: "h.txt", in: fx.outbox)

        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(fx.names(in: fx.outbox), [])
        XCTAssertEqual(fx.names(in: fx.retry), ["h.txt", "h.txt.manifest.json"])
        XCTAssertEqual(uploads(), [], "not due yet")
    }

    /// A power cut kept a move's record in retry/ but not its file, and the producer then took
    /// the file away (simulator seed 4487): the record, due, is moved aside instead of waiting for ever.
    func testADueRecordInRetryWithNoFileAnywhereIsMovedAside() throws {
        let data = Data("taken away".utf8)
        try put("j.txt", data, in: fx.retry)
        var m = try manifest("j.txt", data, state: .retry, in: fx.retry)
        m.storedAs = "retry/j.txt"
        m.nextAttemptAt = Timestamp.format(Date().addingTimeInterval(-60))
        try write(m, for: "j.txt", in: fx.retry)
        try FileManager.default.removeItem(atPath: fx.retry + "/j.txt")

        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(fx.names(in: fx.retry), [])
        XCTAssertEqual(fx.names(in: fx.outbox), [])
        let aside = fx.names(in: fx.spool + "/.quarantine")
        XCTAssertEqual(aside.count, 1)
        XCTAssertTrue(aside.first?.hasPrefix("j.txt.manifest.json.") ?? false, "\(aside)")
        XCTAssertTrue(result.stderr.contains("manifest in retry/ with no file"), result.stderr)
        XCTAssertEqual(uploads(), [])
    }

    /// A move back reached the outbox, a later attempt there was recorded as sent, and a power
    /// cut brought the old `queued` record back to retry/ (simulator seed 5203): the old record
    /// goes, the file goes to sent/ alone — never a second name in retry/ — and is not uploaded again.
    func testAnOldMoveBackRecordInRetryGivesWayToTheLaterRecordInTheOutbox() throws {
        let data = Data("moved on".utf8)
        try put("k.txt", data, in: fx.outbox)
        var queued = try manifest("k.txt", data, state: .queued, in: fx.outbox)
        queued.storedAs = "retry/k.txt"
        try write(queued, for: "k.txt", in: fx.retry)
        var sent = queued
        sent.state = .sent
        sent.storedAs = "sent/k.txt"
        sent.sentAt = Timestamp.format(Date())
        try write(sent, for: "k.txt", in: fx.outbox)

        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(fx.names(in: fx.retry), [])
        XCTAssertEqual(fx.names(in: fx.outbox), [])
        XCTAssertEqual(fx.names(in: fx.sent), ["k.txt", "k.txt.manifest.json"])
        XCTAssertEqual(try fx.manifest("k.txt", in: fx.sent).state, .sent)
        XCTAssertEqual(uploads(), [])
    }

    func testQueuedManifestLeftInRetryIsMovedOnAndUploaded() throws {
        let data = Data("half moved back".utf8)
        try put("i.txt", data, in: fx.retry)
        let m = try manifest("i.txt", data, state: .queued, in: fx.retry)
        try write(m, for: "i.txt", in: fx.retry)

        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(fx.names(in: fx.retry), [])
        XCTAssertEqual(fx.files(in: fx.sent), ["i.txt"])
        XCTAssertEqual(try fx.manifest("i.txt", in: fx.sent).id, m.id)
    }

    func testAClaimLostToAPowerCutIsClaimedAgainUnderTheSameId() throws {
        let data = Data("same key twice".utf8)
        try put("j.txt", data, in: fx.outbox)
        // First claim: the destination is down, so the claim's manifest stays behind, queued.
        let down = try fx.binary.run(["run", "--once", "--config", fx.tmp.write("down.conf", """
            [outbox \(fx.profile)]
            spool = spool
            url = http://127.0.0.1:\(try FreePort.next())/{path}
            """)])
        XCTAssertEqual(down.exitCode, 69, down.stderr)
        let first = try fx.manifest("j.txt", in: fx.outbox)
        // As if a power cut had undone that manifest's rename.
        try FileManager.default.removeItem(atPath: fx.outbox + "/j.txt.manifest.json")

        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(try fx.manifest("j.txt", in: fx.sent).id, first.id)
        XCTAssertEqual(sink.accessLog().first?["idempotency_key"] as? String, first.id)
    }

    func testNameAlreadyTakenInSentGetsANumericSuffix() throws {
        for (name, body) in [("report.pdf", "old"), ("a.tar.gz", "old"), ("README", "old")] {
            try put(name, Data(body.utf8), in: fx.sent)
            try put(name, Data("new \(name)".utf8), in: fx.outbox)
        }
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(Set(fx.files(in: fx.sent)), ["report.pdf", "report.2.pdf", "a.tar.gz", "a.tar.2.gz", "README", "README.2"])
        XCTAssertEqual(try String(contentsOfFile: fx.sent + "/report.pdf", encoding: .utf8), "old", "never overwritten")
        XCTAssertEqual(try fx.manifest("report.2.pdf", in: fx.sent).storedAs, "sent/report.2.pdf")
        XCTAssertEqual(try String(contentsOfFile: fx.sent + "/README.2", encoding: .utf8), "new README")
    }
}
