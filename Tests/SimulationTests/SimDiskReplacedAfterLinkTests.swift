import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderConfig
import UploaderSpool

/// A move into sent/ cut after its links (a disk error took back none of them), after which the
/// producer put a new file under the outbox name: sent/ holds the delivered version under the
/// record's name. The next claims of the new file must leave that version its record: dropping
/// the record's second name (as for a file changed in place) left a file in sent/ with no
/// manifest. Found by the simulator with disk faults drawn (journalled, seed 3001164).
@Suite struct SimDiskReplacedAfterLinkTests {
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func theDeliveredVersionKeepsItsRecordInSentAndTheNewFileIsClaimedAfresh(_ model: SimDisk.Model) throws {
        let disk = SimDiskTesting.disk(model)
        let (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
        let path = RelativePath("a.bin")
        let delivered = SimDiskTesting.bytes("the version that was sent")
        let record = try SimDiskTesting.moveToSentCutAfterLinks(delivered, on: disk, spool, lifecycle, claimer)
        let newer = SimDiskTesting.bytes("a new file under the same name")
        disk.createFile("/spool/outbox/a.bin", data: newer, sync: true)
        try disk.syncAll()

        // The first claim ends the delivery's move (its hook is queued); the new file is claimed on its own.
        guard case .finishedByRecovery(.sent, path, nil, anotherFileUnderName: true) = claimer.claim(path, now: SimDiskTesting.start) else {
            Issue.record("the delivery's move was not finished first")
            return
        }
        guard case .ready(let claimed) = claimer.claim(path, now: SimDiskTesting.start) else {
            Issue.record("the new file was not claimed")
            return
        }
        #expect(claimed.manifest.id != record.id, "the new file is another version")
        #expect(disk.contents("/spool/sent/a.bin") == delivered)
        let kept = try #require(disk.contents("/spool/sent/a.bin.manifest.json"))
        let keptRecord = try Manifest.decode(Data(kept))
        #expect(keptRecord.id == record.id && keptRecord.state == .sent)
        #expect(disk.contents("/spool/outbox/a.bin") == newer)
    }
}
