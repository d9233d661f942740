import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderConfig
import UploaderSpool

/// A move into sent/ cut after its links and the removal of the file's outbox name; then the
/// version in sent/ is written to through the name the move gave it (changed after its upload),
/// and the producer puts a new file under the outbox name. Requeuing the changed version must not
/// take its record away when it cannot have its outbox name back: that left a file in sent/ with
/// no manifest. Found by the simulator with disk faults drawn (journalled, seed 75).
@Suite struct SimDiskChangedInSentAndReplacedTests {
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func theChangedVersionKeepsItsRecordInSentAndTheNewFileIsClaimedAfresh(_ model: SimDisk.Model) throws {
        let disk = SimDiskTesting.disk(model)
        let (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
        let path = RelativePath("a.bin")
        let record = try SimDiskTesting.moveToSentCutAfterLinks(SimDiskTesting.bytes("the version that was sent"), on: disk, spool,
                                                                lifecycle, claimer)
        let changed = SimDiskTesting.bytes("written to through sent/ after the upload")
        #expect(disk.writeInPlace("/spool/sent/a.bin", data: changed))
        let newer = SimDiskTesting.bytes("a new file under the same name")
        #expect(disk.createFile("/spool/outbox/a.bin", data: newer, sync: true))
        try disk.syncAll()

        #expect(try !lifecycle.requeueIfChangedAfterUpload(path, manifest: record, in: .sent, as: path))
        #expect(disk.contents("/spool/sent/a.bin") == changed)
        #expect(disk.contents("/spool/sent/a.bin.manifest.json") != nil, "the version in sent/ keeps its record")

        guard case .ready(let claimed) = claimer.claim(path, now: SimDiskTesting.start) else {
            Issue.record("the new file was not claimed")
            return
        }
        #expect(claimed.manifest.id != record.id, "the new file is another version")
        let kept = try #require(disk.contents("/spool/sent/a.bin.manifest.json"))
        #expect(try Manifest.decode(Data(kept)).id == record.id)
        #expect(disk.contents("/spool/sent/a.bin") == changed)
        #expect(disk.contents("/spool/outbox/a.bin") == newer)
    }
}
