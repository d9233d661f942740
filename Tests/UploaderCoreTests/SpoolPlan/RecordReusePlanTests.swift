import Foundation
import Testing
import UploaderDecisions
import UploaderValues

/// What a claim makes of the record it finds beside a file (`RecordReuse.decide`).
@Suite struct RecordReusePlanTests {
    let a = RelativePath("a.bin")
    let written = Date(timeIntervalSince1970: 1_700_000_000)
    var writtenText: String { Timestamp.format(written) }

    /// A `queued` record of `a.bin` (size 1, mtime `written`) hashed `hashedAfter` seconds after
    /// the file's last write, in boot `boot`, with an S3 upload begun.
    func record(hashedAfter: TimeInterval = 5, boot: String? = "boot-1", sha256: String? = "ab") -> Manifest {
        var manifest = Manifest(id: "id-a", profile: "p", path: a, size: 1, mtime: writtenText, sha256: sha256,
                                contentType: "application/octet-stream", state: .queued,
                                createdAt: Timestamp.format(written.addingTimeInterval(hashedAfter)))
        manifest.claimedInBoot = boot
        manifest.s3 = S3UploadState(uploadID: "u-1", bucket: "b", key: "k", partSize: 5, fileSize: 1, fileMtime: writtenText)
        return manifest
    }

    func decide(_ manifest: Manifest, size: Int64 = 1, boot: String? = "boot-1", wantsDigest: Bool = true,
                at path: RelativePath? = nil) -> RecordReuse {
        RecordReuse.decide(manifest, at: path ?? a, size: size, mtime: written, mtimeText: writtenText, wantsDigest: wantsDigest,
                           bootID: boot, granularity: 0.02)
    }

    @Test func theSameVersionInTheSameBootIsReusedWithItsUpload() {
        let manifest = record()
        #expect(decide(manifest) == .reuse(manifest))
    }

    @Test func anotherVersionIsClaimedAfreshAndItsUploadEnded() {
        guard case .afresh(let stale) = decide(record(), size: 2) else { Issue.record("not afresh"); return }
        #expect(stale.s3?.abandoned == true)
    }

    @Test func aRecordWithNoDigestWhereOneIsWantedIsClaimedAfresh() {
        guard case .afresh(let stale) = decide(record(sha256: nil), wantsDigest: true) else { Issue.record("not afresh"); return }
        #expect(stale.s3?.uploadID == "u-1" && stale.s3?.abandoned == true)
        #expect(decide(record(sha256: nil), wantsDigest: false) == .reuse(record(sha256: nil)))
    }

    @Test func aHashTakenWithinOneTickOfTheWriteIsCheckedFirst() {
        let manifest = record(hashedAfter: 0.01)
        guard case .reuseIfHashHolds(let kept, let stale) = decide(manifest) else { Issue.record("not checked"); return }
        #expect(kept == manifest && stale.s3?.abandoned == true)
    }

    @Test func aRecordOfAnotherBootIsCheckedAndItsUploadsEnded() {
        guard case .reuseIfHashHolds(let kept, _) = decide(record(), boot: "boot-2") else { Issue.record("not checked"); return }
        #expect(kept.claimedInBoot == "boot-2" && kept.s3?.abandoned == true)
    }

    @Test func aRecordBroughtBackUnderAnotherNameSaysSo() {
        guard case .reuse(let kept) = decide(record(), at: RelativePath("a.2.bin")) else { Issue.record("not reused"); return }
        #expect(kept.outboxPath == RelativePath("a.2.bin"))
    }
}
