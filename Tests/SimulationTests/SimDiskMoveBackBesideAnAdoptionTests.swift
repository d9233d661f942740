import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderConfig
import UploaderSpool

/// A file of ours waits in retry/ as `a.bin`; another user then dropped a new `a.bin`, whose claim
/// swapped in our copy and kept the producer's original under `.upl-adopt.a.bin`, and the producer
/// removed the name (our copy) before it was claimed. `uploader retry` moves the file in retry/
/// back: not under `a.bin`, where the start-up would give the original its name back over it, but
/// under a free name; the start-up then drops the original (its file was removed) and the file
/// that failed is still queued (noJournal seed 70006170 of the simulator: the original was renamed
/// over the file moved back, whose bytes were then nowhere).
@Suite struct SimDiskMoveBackBesideAnAdoptionTests {
    static let failed = SimDiskTesting.bytes("the version the server answered 429")
    static let original = SimDiskTesting.bytes("another user's newer file, removed by its producer")

    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func theFileMovedBackKeepsItsBytesWhenTheStartUpSettlesTheLeftover(_ model: SimDisk.Model) throws {
        let disk = SimDiskTesting.disk(model)
        let (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
        let path = RelativePath("a.bin")
        var record = try SimDiskTesting.begunAttempt(path, data: Self.failed, ending: .retry, on: disk, spool, lifecycle, claimer)
        record.storedAs = spool.storedAs(path, in: .retry)
        try spool.writeManifest(record, for: path, in: .outbox, syncDirectory: true)
        try lifecycle.completeMove(path, manifest: record, to: .retry, as: path)
        #expect(disk.createFile("/spool/outbox/.upl-adopt.a.bin", data: Self.original, sync: true, foreign: true))
        try disk.syncAll()

        let target = try lifecycle.moveBack(fromRetry: path, resetBackoff: true)
        #expect(target == RelativePath("a.2.bin"), "the name an adoption's leftover may take back is not free")
        _ = SimDiskTesting.recovery(spool, lifecycle).scanOutbox()

        let places = SimDiskTesting.files(on: disk, below: "/spool").filter { $0.value == Self.failed }.keys.sorted()
        #expect(places == ["/spool/outbox/a.2.bin"], "the file that failed is queued under a free name")
        #expect(try spool.readManifest(for: RelativePath("a.2.bin"), in: .outbox).get().state == .queued)
        #expect(!disk.exists(path: "/spool/outbox/.upl-adopt.a.bin"), "the removed file's original goes")
        #expect(!disk.exists(path: "/spool/outbox/a.bin"))
    }
}
