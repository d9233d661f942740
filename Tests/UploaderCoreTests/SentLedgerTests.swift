import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool

/// The sent ledger: what `status` counts as `sent_24h`, written as files reach sent/ and read
/// without reading sent/.
@Suite struct SentLedgerTests {
    static let now = Date(timeIntervalSince1970: 1_795_956_679)
    static let quiet = Logger(level: .error, sink: { _ in })

    static func delivery(_ name: String, bytes: Int64, ago: TimeInterval) -> Manifest {
        var m = Manifest(id: "b0a4c2de-0000-4000-8000-000000000001", profile: "p", path: RelativePath(name), size: bytes,
                         mtime: "m", sha256: nil, contentType: "application/octet-stream", state: .sent, createdAt: "c")
        m.sentAt = Timestamp.format(now.addingTimeInterval(-ago))
        return m
    }

    static func ledger(_ dir: TemporaryDirectory, compactEvery: Int = 4096) -> SentLedger {
        SentLedger(fs: LocalFileSystem(), directory: dir.path, compactEvery: compactEvery)
    }

    static func text(_ dir: TemporaryDirectory) throws -> String {
        try String(contentsOfFile: dir.path + "/.sent-ledger", encoding: .utf8)
    }

    @Test func countsTheDeliveriesOfTheLast24HoursOnly() throws {
        let dir = try TemporaryDirectory()
        let ledger = Self.ledger(dir)
        ledger.record([Self.delivery("a", bytes: 10, ago: 3600), Self.delivery("b", bytes: 20, ago: 86_400 - 60)], logger: Self.quiet)
        ledger.record([Self.delivery("old", bytes: 40, ago: 86_400 + 60)], logger: Self.quiet)
        let recent = try ledger.recent(now: Self.now)
        #expect(recent.files == 2 && recent.bytes == 30)
        #expect(try Self.ledger(dir).recent(now: Self.now.addingTimeInterval(7200)).files == 1, "b has left the window 2 h later")
    }

    @Test func noLedgerCountsNothing() throws {
        let dir = try TemporaryDirectory()
        #expect(try Self.ledger(dir).recent(now: Self.now) == (0, 0))
    }

    @Test func compactionDropsWhatIsOlderAndFoldsTheRestByMinute() throws {
        let dir = try TemporaryDirectory()
        let ledger = Self.ledger(dir, compactEvery: 5)
        // Twelve files in one minute, three in another, one older than a day.
        let batch = (0..<12).map { Self.delivery("f\($0)", bytes: 100, ago: 600 + Double($0)) }
            + (0..<3).map { Self.delivery("g\($0)", bytes: 7, ago: 7200 + Double($0)) } + [Self.delivery("old", bytes: 1, ago: 90_000)]
        for manifest in batch { ledger.record([manifest], logger: Self.quiet) }
        let lines = try Self.text(dir).split(separator: "\n")
        #expect(lines.count < batch.count, "compacted along the way: \(lines)")
        try ledger.compact(now: Self.now)
        let folded = try Self.text(dir).split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(folded.count == 2, "one line per minute, the old one gone: \(folded)")
        #expect(folded.map { $0.dropFirst().joined(separator: " ") } == ["21 3", "1200 12"])
        #expect(try ledger.recent(now: Self.now) == (15, 1221))
    }

    @Test func aTornLastLineIsIgnoredAndTheNextWriterDropsIt() throws {
        let dir = try TemporaryDirectory()
        let t = SentLedger.millis(Self.now) - 1000
        // A power cut kept part of the last append: no newline, so not a line.
        try Data("\(t) 10\n\(t) 20\n\(t) 3".utf8).write(to: URL(fileURLWithPath: dir.path + "/.sent-ledger"))
        #expect(try Self.ledger(dir).recent(now: Self.now) == (2, 30))
        // The next process's first append compacts first, so the piece is not completed by it.
        let next = Self.ledger(dir)
        next.record([Self.delivery("n", bytes: 5, ago: 10)], logger: Self.quiet)
        #expect(try next.recent(now: Self.now) == (3, 35))
        #expect(try Self.text(dir).hasSuffix("\n"))
    }

    @Test func aLedgerThatCannotBeCompactedStillGetsWholeLines() throws {
        let dir = try TemporaryDirectory()
        let t = SentLedger.millis(Self.now) - 1000
        try Data("\(t) 10\n\(t) 2".utf8).write(to: URL(fileURLWithPath: dir.path + "/.sent-ledger"))
        // Its compaction's temporary name is taken by a directory: the compaction fails.
        try FileManager.default.createDirectory(atPath: dir.path + "/.sent-ledger.compacting", withIntermediateDirectories: false)
        let lines = SpoolCensusSentTests.Seen()
        let logger = Logger(level: .warn, sink: { line in lines.calls.withLock { $0.append(line) } })
        Self.ledger(dir).record([Self.delivery("n", bytes: 5, ago: 10)], logger: logger)
        #expect(try Self.ledger(dir).recent(now: Self.now) == (3, 17), "the cut line ended on its own, the new one whole")
        let warnings = lines.calls.withLock { $0 }
        #expect(warnings.count == 1 && warnings[0].contains("sent ledger"), "\(warnings)")
    }

    @Test func linesThatDoNotParseAreSkipped() throws {
        let dir = try TemporaryDirectory()
        let t = SentLedger.millis(Self.now) - 1000
        let junk = ["\(t) 1", "x y", "\(t)", "\(t) 2 0", "\(t) -3", "\u{0}\u{0}\(t) 4", "1\(t) 5", "\(t) 6 2"]
        try Data((junk.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: dir.path + "/.sent-ledger"))
        #expect(try Self.ledger(dir).recent(now: Self.now) == (3, 7), "the first and the last (2 files) only")
    }

    @Test func aMoveToSentAddsOneLineAndAMoveRunAgainAddsNone() throws {
        let dir = try TemporaryDirectory()
        let spool = Spool(paths: SpoolPaths(root: dir.path + "/spool"))
        try spool.prepare()
        let lifecycle = FileLifecycle(spool: spool, logger: Self.quiet)
        let path = RelativePath("a.bin")
        try Data("12345".utf8).write(to: URL(fileURLWithPath: spool.paths.outbox + "/a.bin"))
        let manifest = Self.delivery("a.bin", bytes: 5, ago: 1)
        try spool.writeManifest(manifest, for: path, in: .outbox)
        // A move cut after its links: run again by recovery, the manifest's name in sent/ is there.
        try FileManager.default.linkItem(atPath: spool.paths.outbox + "/a.bin.manifest.json", toPath: spool.paths.sent + "/a.bin.manifest.json")
        try lifecycle.completeMove(path, manifest: manifest, to: .sent, as: path)
        #expect(try spool.sentLedger.recent(now: Self.now) == (0, 0), "counted by the move that made the name")
        try Data("xy".utf8).write(to: URL(fileURLWithPath: spool.paths.outbox + "/b.bin"))
        let b = Self.delivery("b.bin", bytes: 2, ago: 1)
        try spool.writeManifest(b, for: RelativePath("b.bin"), in: .outbox)
        try lifecycle.finish(RelativePath("b.bin"), manifest: b, to: .sent)
        #expect(try spool.sentLedger.recent(now: Self.now) == (1, 2))
        #expect(FileManager.default.fileExists(atPath: spool.paths.sent + "/b.bin"))
    }
}
