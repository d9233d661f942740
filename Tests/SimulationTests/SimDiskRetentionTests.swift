import Foundation
import Synchronization
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderConfig
import UploaderDecisions
@testable import UploaderSpool

/// `keep_sent` and `keep_sent_bytes` on the simulated disk: a pass over sent/ deleting a delivered
/// file and its manifest, the power cut at each of its operations (in both disk models), then the
/// next pass. Whatever the cut keeps, no file stays in sent/ without its manifest, and the next pass
/// leaves nothing of the deletion behind.
@Suite struct SimDiskRetentionTests {
    static let sent = "/spool/sent"

    /// `a.bin` delivered an hour before `b.bin`, each with its manifest, all durable.
    static func spool(_ model: SimDisk.Model) throws -> (SimDisk, Spool) {
        let now = Mutex(SimDiskTesting.start)
        let disk = SimDisk(model: model, now: { now.withLock { $0 } })
        let spool = Spool(paths: SpoolPaths(root: "/spool"), fs: disk, temporaries: TemporaryNames(start: 0))
        try spool.prepare()
        for name in ["a.bin", "b.bin"] {
            disk.createFile("\(sent)/\(name)", data: SimDiskTesting.bytes("payload of \(name)"), sync: true)
            disk.createFile("\(sent)/\(name).manifest.json", data: SimDiskTesting.bytes("{\"record\": \"\(name)\"}"), sync: true)
            now.withLock { $0 = $0.addingTimeInterval(3600) }
        }
        try disk.syncAll()
        return (disk, spool)
    }

    static func retention(_ spool: Spool, keep: TimeInterval, keepBytes: Int64) -> Retention {
        Retention(spool: spool, keep: keep, keepBytes: keepBytes, logger: Logger(level: .error, sink: { _ in }))
    }

    /// The names in sent/ with no partner: a file without its manifest, or a manifest without its file.
    static func unpaired(_ disk: SimDisk) -> [String] {
        let names = Set(disk.names(in: sent))
        return names.sorted().filter { name in
            name.hasSuffix(".manifest.json") ? !names.contains(String(name.dropLast(".manifest.json".count))) : !names.contains(name + ".manifest.json")
        }
    }

    /// The bound a pass enforces: keep_sent (`a.bin` is past it, `b.bin` not), or keep_sent_bytes (only one of the two fits).
    enum Bound: CaseIterable, Sendable {
        case age, size
        var keep: TimeInterval { self == .age ? 60 : 0 }
        var keepBytes: Int64 { self == .size ? 60 : 0 }
    }

    /// For each of a pass's first six operations (the deletion's own, and a few more) and 16 power
    /// cuts: a fresh spool, a pass killed (kill -9) at that operation, `beforePowerCut`, the power
    /// cut, then `check` with the disk, the retention and where it was cut.
    static func eachKilledPass(_ model: SimDisk.Model, _ bounds: Bound, beforePowerCut: (Retention) -> Void,
                               check: (SimDisk, Retention, String) -> Void) throws {
        for k in 0..<6 {
            for seed in 0..<UInt64(16) {
                // b.bin's record is an hour younger than a.bin's: the oldest goes first, and only a.bin is past `keep`.
                let (disk, spool) = try spool(model)
                let retention = retention(spool, keep: bounds.keep, keepBytes: bounds.keepBytes)
                disk.crash(atOperation: disk.operations + k)
                retention.sweep(now: SimDiskTesting.start.addingTimeInterval(3600 + 1))
                disk.killProcess()
                beforePowerCut(retention)
                var rng = SplitMix64(seed: seed)
                disk.powerCut(&rng)
                check(disk, retention, "\(model), cut at operation \(k), power cut seed \(seed)")
            }
        }
    }

    @Test(arguments: SimDisk.Model.allCases, Bound.allCases)
    func aPassCutByAPowerCutNeverLeavesAFileWithoutItsManifest(_ model: SimDisk.Model, _ bounds: Bound) throws {
        try Self.eachKilledPass(model, bounds, beforePowerCut: { _ in }) { disk, retention, cut in
            #expect(!Self.unpaired(disk).contains { !$0.hasSuffix(".manifest.json") }, "a file without its manifest: \(Self.unpaired(disk)), \(cut)")
            retention.sweep(now: SimDiskTesting.start.addingTimeInterval(3600 + 2))
            #expect(Self.unpaired(disk).isEmpty, "after the next pass: \(Self.unpaired(disk)), \(cut)")
            #expect(disk.names(in: Self.sent).contains("b.bin"), "the younger file went: \(cut)")
        }
    }

    /// A pass killed (kill -9) at each of its operations, the next process's pass finishing the
    /// deletion, then a power cut: the killed pass may have removed the file without making that
    /// durable, so the pass that finds the manifest alone makes the file's absence durable before
    /// the manifest goes (noJournal seed 50009890 of the simulator: a power cut kept the
    /// manifest's removal and brought the file back without it).
    @Test(arguments: SimDisk.Model.allCases, Bound.allCases)
    func aDeletionAKillCutAndTheNextPassFinishedSurvivesAPowerCut(_ model: SimDisk.Model, _ bounds: Bound) throws {
        let nextPass: (Retention) -> Void = { $0.sweep(now: SimDiskTesting.start.addingTimeInterval(3600 + 2)) }
        try Self.eachKilledPass(model, bounds, beforePowerCut: nextPass) { disk, _, cut in
            #expect(!Self.unpaired(disk).contains { !$0.hasSuffix(".manifest.json") }, "a file without its manifest: \(Self.unpaired(disk)), \(cut)")
        }
    }

    /// A file in sent/ whose bytes are not what its record says was sent — a power cut brought
    /// back an older version of a file its producer had rewritten in place and never fsynced — is
    /// kept by retention, the only copy of those bytes (noJournal seed 500405, `noFileLost`:
    /// `keep_sent_bytes` deleted it). One that matches its record goes as before.
    @Test(arguments: [false, true])
    func retentionKeepsAFileInSentThatIsNotWhatWasSent(_ rolledBack: Bool) throws {
        let disk = SimDiskTesting.disk(.noJournal)
        let (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
        let path = RelativePath("a.bin")
        let record = try SimDiskTesting.begunAttempt(path, data: SimDiskTesting.bytes("the bytes sent"), ending: .sent, on: disk,
                                                     spool, lifecycle, claimer)
        try lifecycle.finish(path, manifest: record, to: .sent)
        if rolledBack { disk.writeInPlace("\(Self.sent)/a.bin", data: SimDiskTesting.bytes("an older version, longer")) }
        let removed = Self.retention(spool, keep: 0, keepBytes: 1).sweep(now: SimDiskTesting.start.addingTimeInterval(60))
        #expect(removed == (rolledBack ? 0 : 1))
        #expect(disk.exists(path: "\(Self.sent)/a.bin") == rolledBack)
        #expect(Self.unpaired(disk).isEmpty)
    }
}
