import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderSpool

/// A record moved aside into `.quarantine/` is never lost: once the move has returned, a power
/// cut leaves it in `.quarantine/` (or, the move undone, back where it came from), on a file
/// system that persists each directory's entries on their own. The source directory's fsync by
/// any later move (here, at once) must not make its absence durable before its new entries are.
@Suite struct SimDiskQuarantineTests {
    static let record = SimDiskTesting.bytes(#"{"version":1,"state":"retry"}"#)

    /// Where the record is after the cut: in `.quarantine/`, back in retry/, both, or nowhere.
    static func whereTheRecordIs(_ disk: SimDisk) -> String {
        let aside = disk.names(in: "/spool/.quarantine").contains { disk.contents("/spool/.quarantine/" + $0) == record }
        let back = disk.contents("/spool/retry/a.bin.manifest.json") == record
        return aside ? (back ? "both" : "quarantine") : (back ? "retry" : "nowhere")
    }

    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aRecordMovedAsideSurvivesAPowerCut(_ model: SimDisk.Model) throws {
        let outcomes = try SimDiskTesting.powerCutOutcomes(model, setUp: { disk in
            let (spool, _, _) = try SimDiskTesting.spool(on: disk)
            disk.createFile("/spool/retry/a.bin.manifest.json", data: Self.record, sync: true)
            try disk.syncAll()
            try spool.quarantineManifest(for: RelativePath("a.bin"), in: .retry, now: SimDiskTesting.start)
            // Another move's fsync of retry/ makes the record's absence there durable.
            try disk.syncDirectory(of: RelativePath("x"), in: "/spool/retry")
        }, outcome: Self.whereTheRecordIs)
        #expect(!outcomes.contains("nowhere"), "outcomes of the power cut: \(outcomes.sorted())")
        #expect(outcomes.contains("quarantine"))
    }

    /// The move aside killed at any of its operations (kill -9), then retry/ fsynced by another
    /// move of the next process, then a power cut: the record is never lost. A rename aside cut
    /// before `.quarantine/`'s fsync left the new name unsynced while that later fsync made the old
    /// name's removal durable (noJournal seed 401730: the record nowhere after the cut).
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aMoveAsideKilledAnywhereThenAPowerCutLosesNoRecord(_ model: SimDisk.Model) throws {
        for k in 1...8 {
            let outcomes = try SimDiskTesting.powerCutOutcomes(model, runs: 60, setUp: { disk in
                let (spool, _, _) = try SimDiskTesting.spool(on: disk)
                disk.createFile("/spool/retry/a.bin.manifest.json", data: Self.record, sync: true)
                try disk.syncAll()
                disk.crash(atOperation: disk.operations + k)
                _ = try? spool.quarantineManifest(for: RelativePath("a.bin"), in: .retry, now: SimDiskTesting.start)
                disk.killProcess()
                try disk.syncDirectory(of: RelativePath("x"), in: "/spool/retry")
            }, outcome: Self.whereTheRecordIs)
            #expect(!outcomes.contains("nowhere"), "killed at \(k); outcomes of the power cut: \(outcomes.sorted())")
        }
    }
}
