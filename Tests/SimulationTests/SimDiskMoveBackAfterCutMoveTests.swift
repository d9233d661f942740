import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderConfig
import UploaderSpool

/// A move into retry/ cut after its links, before its fsync of retry/ (a kill -9, or an fsync
/// refused with EIO), and the producer then removes the file's outbox name: the move back that
/// comes due drops the record's outbox name. Cut anywhere by a power cut, it never leaves the file
/// in retry/ without a record (noJournal seed 16006635 of the simulator: the outbox name's removal
/// persisted, the record's unsynced link in retry/ did not).
@Suite struct SimDiskMoveBackAfterCutMoveTests {
    static let payload = SimDiskTesting.bytes("the payload")

    /// The cut move, the outbox name removed; the record's only durable name is the outbox's.
    static func layOut(_ disk: SimDisk) throws -> FileLifecycle {
        let (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
        let path = RelativePath("a.bin")
        var record = try SimDiskTesting.begunAttempt(path, data: payload, ending: .retry, on: disk, spool, lifecycle, claimer)
        record.storedAs = spool.storedAs(path, in: .retry)
        try spool.writeManifest(record, for: path, in: .outbox, syncDirectory: true)
        try disk.link("/spool/outbox/a.bin", "/spool/retry/a.bin")
        try disk.link("/spool/outbox/a.bin.manifest.json", "/spool/retry/a.bin.manifest.json")
        try disk.remove("/spool/outbox/a.bin")
        return lifecycle
    }

    @Test func aMoveBackThatDropsTheRecordsOutboxNameLeavesNoFileInRetryWithoutItsRecord() throws {
        let orphans = try SimDiskTesting.cutsLeaving(.noJournal, layOut: Self.layOut, run: { lifecycle in
            _ = try lifecycle.moveBack(fromRetry: RelativePath("a.bin"), resetBackoff: false)
        }, bad: { disk in
            disk.exists(path: "/spool/retry/a.bin") && !disk.exists(path: "/spool/retry/a.bin.manifest.json")
                && !disk.exists(path: "/spool/outbox/a.bin.manifest.json")
        })
        #expect(orphans.isEmpty, "a.bin in retry/ with no record anywhere after a cut at operation \(orphans)")
    }
}
