import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderValues

/// A producer rewrote its file in place with the same size and never fsynced; the daemon claimed
/// it and recorded the new bytes' digest; a power cut then undid the write but kept the inode's
/// size and mtime (a disk without a journal). The record matches the file by size and mtime, but
/// not by content: a claim in the next boot must hash the file again, or its bytes go out under a
/// digest they do not have (a server checking `Content-Digest` refuses them for ever; one that
/// does not keeps them under a record naming other bytes). noJournal seed 18018378 of the
/// simulator: `sent/f1-semi;colon#hash is marked sent but the server never kept its bytes`.
@Suite struct SimDiskContentUndoneBeforeClaimTests {
    static let durable = SimDiskTesting.bytes("first version")
    static let rewrite = SimDiskTesting.bytes("second one!!!")

    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aClaimInTheNextBootHashesAgainARecordWhoseBytesAPowerCutUndid(_ model: SimDisk.Model) throws {
        #expect(Self.durable.count == Self.rewrite.count)
        struct Outcome: Hashable {
            var undone: Bool
            var digestMatches: Bool
        }
        let outcomes = try SimDiskTesting.powerCutOutcomes(model, setUp: { disk in
            let (spool, lifecycle, _) = try SimDiskTesting.spool(on: disk)
            let claimer = Self.claimer(spool, lifecycle, boot: "boot-1")
            #expect(disk.createFile("/spool/outbox/a.bin", data: Self.durable, sync: true))
            disk.syncParent("/spool/outbox/a.bin")
            #expect(disk.writeInPlace("/spool/outbox/a.bin", data: Self.rewrite))
            guard case .ready(let claimed) = claimer.claim(RelativePath("a.bin"), now: SimDiskTesting.start.addingTimeInterval(60)) else {
                Issue.record("not claimed")
                return
            }
            #expect(claimed.manifest.sha256 == SHA256.hash(Self.rewrite).hexString)
            try spool.writeManifest(claimed.manifest, for: RelativePath("a.bin"), in: .outbox)
            try spool.syncDirectory(of: RelativePath("a.bin"), in: .outbox)
            spool.fs.close(claimed.fd)
        }, outcome: { disk in
            let (spool, lifecycle, _) = try! SimDiskTesting.spool(on: disk)
            let content = disk.contents("/spool/outbox/a.bin") ?? []
            guard case .ready(let claimed) = Self.claimer(spool, lifecycle, boot: "boot-2")
                .claim(RelativePath("a.bin"), now: SimDiskTesting.start.addingTimeInterval(120)) else {
                // Nothing to claim (the cut took the file's name): nothing goes out under any digest.
                return Outcome(undone: false, digestMatches: disk.contents("/spool/outbox/a.bin") == nil)
            }
            return Outcome(undone: content == Self.durable, digestMatches: claimed.manifest.sha256 == SHA256.hash(content).hexString)
        })
        let undone = outcomes.contains { $0.undone }, stale = outcomes.filter { !$0.digestMatches }
        if model == .noJournal { #expect(undone, "no power cut undid the write: \(outcomes)") }
        #expect(stale.isEmpty, "claimed under a digest its bytes do not have: \(stale)")
    }

    static func claimer(_ spool: Spool, _ lifecycle: FileLifecycle, boot: String) -> Claimer {
        Claimer(spool: spool, profileName: "sim", digest: .sha256, mimeTypes: MimeTypes(byExtension: [:]), lifecycle: lifecycle,
                logger: Logger(level: .error, sink: { _ in }), bootID: boot)
    }

    /// An S3 multipart upload the record holds is resumed by a claim in the boot that began it
    /// (a kill -9 keeps the page cache, so the parts sent are of the file's bytes), and only ended
    /// by a claim in another: its parts may be of bytes a power cut has since undone, under the
    /// size and mtime the upload began with (noJournal seed 19002320 of the simulator: the object
    /// assembled from an undone write's first part and the file's later ones).
    @Test(arguments: ["boot-1", "boot-2"])
    func anS3UploadIsResumedOnlyInTheBootThatBeganIt(_ boot: String) throws {
        let disk = SimDiskTesting.disk(.noJournal)
        let (spool, lifecycle, _) = try SimDiskTesting.spool(on: disk)
        #expect(disk.createFile("/spool/outbox/a.bin", data: Self.durable, sync: true))
        guard case .ready(let first) = Self.claimer(spool, lifecycle, boot: "boot-1").claim(RelativePath("a.bin"), now: SimDiskTesting.start) else {
            Issue.record("not claimed")
            return
        }
        var record = first.manifest
        record.s3 = S3UploadState(uploadID: "up-1", bucket: "b", key: "a.bin", partSize: 8, fileSize: Int64(Self.durable.count),
                                  fileMtime: first.status.mtimeText, parts: [.init(number: 1, etag: "\"p1\"")])
        try spool.writeManifest(record, for: RelativePath("a.bin"), in: .outbox)
        spool.fs.close(first.fd)
        guard case .ready(let again) = Self.claimer(spool, lifecycle, boot: boot).claim(RelativePath("a.bin"), now: SimDiskTesting.start) else {
            Issue.record("not claimed again")
            return
        }
        #expect(again.manifest.id == record.id && again.manifest.s3?.uploadID == "up-1")
        #expect((again.manifest.s3?.abandoned == true) == (boot != "boot-1"))
        #expect(again.manifest.claimedInBoot == boot)
    }
}
