import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderConfig
import UploaderSpool

/// A file written to during its move into sent/ comes back to the outbox (`bringBack`), and its
/// names in sent/ go: cut anywhere by a power cut without a journal, sent/ never keeps the file
/// without its record (noJournal seed 16009939 of the simulator: the fsync after both unlinks
/// failed, and a power cut kept the record's removal and lost the file's).
@Suite struct SimDiskBringBackOrderTests {
    static let payload = SimDiskTesting.bytes("the version that was sent")

    /// A move into sent/ cut after its links and the removal of the file's outbox name, all durable.
    static func layOut(_ disk: SimDisk) throws -> FileLifecycle {
        let (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
        _ = try SimDiskTesting.moveToSentCutAfterLinks(payload, on: disk, spool, lifecycle, claimer)
        try disk.syncAll()
        return lifecycle
    }

    @Test func aBringBackCutAnywhereNeverLeavesTheFileInSentWithoutItsRecord() throws {
        let alone = try SimDiskTesting.cutsLeaving(.noJournal, layOut: Self.layOut, run: { lifecycle in
            try lifecycle.bringBack(RelativePath("a.bin"), from: .sent, to: RelativePath("a.bin"))
        }, bad: { disk in
            disk.exists(path: "/spool/sent/a.bin") && !disk.exists(path: "/spool/sent/a.bin.manifest.json")
        })
        #expect(alone.isEmpty, "a.bin alone in sent/ after a cut at operation \(alone)")
    }
}
