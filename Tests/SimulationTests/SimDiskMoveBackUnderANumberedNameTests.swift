import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderConfig
import UploaderSpool

/// A move into retry/ under a numbered name (`a.2.bin`: another file had `a.bin` there) cut
/// after its links, its file and record still under `a.bin` in the outbox too; then
/// `uploader retry` moves it back. The move into retry/ is finished first: the file comes back
/// once, and the claim of its old outbox name does not file it into retry/ again (noJournal seed
/// 60015629 of the simulator: the claim linked it into retry/ once more, the move back's copy
/// went on to sent/, and one file was in sent/ and in retry/).
@Suite struct SimDiskMoveBackUnderANumberedNameTests {
    static let payload = SimDiskTesting.bytes("the payload that failed")
    static let other = SimDiskTesting.bytes("the file that had the name in retry/")

    struct Layout {
        let disk: SimDisk
        let lifecycle: FileLifecycle
        let claimer: Claimer
        let inode: UInt64

        init(_ model: SimDisk.Model) throws {
            disk = SimDiskTesting.disk(model)
            let spool: Spool
            (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
            let path = RelativePath("a.bin"), numbered = RelativePath("a.2.bin")
            var record = try SimDiskTesting.begunAttempt(path, data: Self.payloadBytes, ending: .failed, on: disk, spool, lifecycle, claimer)
            record.storedAs = spool.storedAs(numbered, in: .retry)
            try spool.writeManifest(record, for: path, in: .outbox, syncDirectory: true)
            // The other file, filed in retry/ as a.bin before.
            var otherRecord = record
            otherRecord.id = "another-file"
            otherRecord.storedAs = spool.storedAs(path, in: .retry)
            #expect(disk.createFile("/spool/retry/a.bin", data: SimDiskMoveBackUnderANumberedNameTests.other, sync: true))
            try spool.writeManifest(otherRecord, for: path, in: .retry, syncDirectory: true)
            try disk.link("/spool/outbox/a.bin", "/spool/retry/a.2.bin")
            try disk.link("/spool/outbox/a.bin.manifest.json", "/spool/retry/a.2.bin.manifest.json")
            try disk.syncAll()
            inode = try #require(disk.inode("/spool/outbox/a.bin"))
        }

        private static var payloadBytes: [UInt8] { SimDiskMoveBackUnderANumberedNameTests.payload }

        /// Every name below the spool's three areas that leads to the payload's file.
        func namesOfThePayload() -> [String] {
            ["outbox", "sent", "retry"].flatMap { area in
                disk.names(in: "/spool/" + area).map { "/spool/\(area)/\($0)" }.filter { disk.inode($0) == inode }
            }
        }
    }

    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func theCutMoveIsFinishedBeforeTheFileComesBackOnce(_ model: SimDisk.Model) throws {
        let layout = try Layout(model)
        let disk = layout.disk
        let target = try layout.lifecycle.moveBack(fromRetry: RelativePath("a.2.bin"), resetBackoff: true)
        #expect(target == RelativePath("a.2.bin"))
        #expect(layout.namesOfThePayload() == ["/spool/outbox/a.2.bin"])
        #expect(!disk.exists(path: "/spool/outbox/a.bin.manifest.json"), "the cut move's record stays under the old name")
        #expect(disk.names(in: "/spool/retry").sorted() == ["a.bin", "a.bin.manifest.json"], "the other file stays in retry/")
    }

    /// As the simulator interleaved it: the move back, then the daemon's claim of the old name.
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func theOldNamesClaimDoesNotFileTheFileInRetryAgain(_ model: SimDisk.Model) throws {
        let layout = try Layout(model)
        _ = try layout.lifecycle.moveBack(fromRetry: RelativePath("a.2.bin"), resetBackoff: true)
        _ = layout.claimer.claim(RelativePath("a.bin"), now: SimDiskTesting.start)
        #expect(layout.namesOfThePayload() == ["/spool/outbox/a.2.bin"], "one file, one place")
    }
}
