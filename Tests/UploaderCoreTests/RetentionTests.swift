import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool

/// `keep_sent_bytes` (oldest first) and `keep_sent` (age): what retention deletes from sent/, a
/// file's manifest with it, walking sent/ as a stream with a bounded window of candidates.
@Suite struct RetentionTests {
    static let now = Date(timeIntervalSince1970: 1_795_956_679)
    static let quiet = Logger(level: .error, sink: { _ in })

    /// A spool with `count` files of `size` bytes in sent/ (`sub/` holds every third), each with a
    /// 10-byte manifest recorded `count - i` minutes before `now`: f0 is the oldest.
    static func spool(_ dir: TemporaryDirectory, count: Int, size: Int) throws -> Spool {
        let spool = Spool(paths: SpoolPaths(root: dir.path + "/spool"))
        try spool.prepare()
        try FileManager.default.createDirectory(atPath: spool.paths.sent + "/sub", withIntermediateDirectories: true)
        for i in 0..<count {
            let name = (i % 3 == 2 ? "sub/" : "") + "f\(i).bin"
            try Data(repeating: 1, count: size).write(to: URL(fileURLWithPath: spool.paths.sent + "/" + name))
            let manifest = spool.paths.sent + "/" + name + ".manifest.json"
            try Data("0123456789".utf8).write(to: URL(fileURLWithPath: manifest))
            try FileManager.default.setAttributes([.modificationDate: now.addingTimeInterval(-60 * Double(count - i))], ofItemAtPath: manifest)
        }
        return spool
    }

    /// The files left in sent/ (sub/ included), sorted; manifests as `+m`.
    static func left(_ spool: Spool) throws -> [String] {
        let all = try FileManager.default.subpathsOfDirectory(atPath: spool.paths.sent).filter { $0 != "sub" }
        return all.map { $0.replacingOccurrences(of: ".manifest.json", with: "+m") }.sorted()
    }

    static func names(_ indices: Range<Int>) -> [String] {
        indices.flatMap { i -> [String] in
            let name = (i % 3 == 2 ? "sub/" : "") + "f\(i).bin"
            return [name, name + "+m"]
        }.sorted()
    }

    @Test(arguments: [100, 3])
    func theSizeBoundDeletesTheOldestFilesWithTheirManifests(window: Int) throws {
        let dir = try TemporaryDirectory()
        let spool = try Self.spool(dir, count: 20, size: 90)
        // Each file and its manifest take 100 bytes: 650 keeps the 6 newest.
        let retention = Retention(spool: spool, keep: 0, keepBytes: 650, logger: Self.quiet, window: window)
        #expect(retention.sweep(now: Self.now) == 14)
        #expect(try Self.left(spool) == Self.names(14..<20))
        #expect(retention.sweep(now: Self.now) == 0, "within the bound: nothing more")
    }

    @Test func aFileWithoutAManifestIsNeitherCountedNorDeleted() throws {
        let dir = try TemporaryDirectory()
        let spool = try Self.spool(dir, count: 4, size: 90)
        try Data(repeating: 2, count: 10_000).write(to: URL(fileURLWithPath: spool.paths.sent + "/by-hand.bin"))
        let retention = Retention(spool: spool, keep: 0, keepBytes: 300, logger: Self.quiet)
        #expect(retention.sweep(now: Self.now) == 1)
        #expect(try Self.left(spool) == (["by-hand.bin"] + Self.names(1..<4)).sorted())
    }

    @Test func aFileWhoseHookIsStillDueStays() throws {
        let dir = try TemporaryDirectory()
        let spool = try Self.spool(dir, count: 4, size: 90)
        var due = Manifest(id: "b0a4c2de-0000-4000-8000-000000000001", profile: "p", path: RelativePath("f0.bin"), size: 90, mtime: "m",
                           sha256: nil, contentType: "application/octet-stream", state: .sent, createdAt: "c")
        due.markHookDue()
        try HookLedger(spool: spool).ensureMarker(for: due, at: RelativePath("f0.bin"), in: .sent)
        let retention = Retention(spool: spool, keep: 0, keepBytes: 200, logger: Self.quiet)
        #expect(retention.sweep(now: Self.now) == 2)
        #expect(try Self.left(spool) == Self.names(0..<1) + Self.names(3..<4))
    }

    @Test func ageAndSizeTogether() throws {
        let dir = try TemporaryDirectory()
        let spool = try Self.spool(dir, count: 10, size: 90)
        // Older than 5.5 minutes: f0–f4; then the size bound keeps the 3 newest of the rest.
        let retention = Retention(spool: spool, keep: 330, keepBytes: 300, logger: Self.quiet, window: 2)
        #expect(retention.sweep(now: Self.now) == 7)
        #expect(try Self.left(spool) == Self.names(7..<10))
    }
}
