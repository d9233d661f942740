import Foundation
import UploaderValues

/// What a claim makes of the `queued` or `uploading` record it finds beside a file: reuse it (its
/// id, hash and resumable upload), reuse it only once the file is hashed again and still matches,
/// or claim the file afresh. A record's reuse is what keeps an upload's key and a resumable
/// upload's progress across restarts; a reuse of a record whose hash the bytes no longer have
/// would send them under a digest they do not have.
package enum RecordReuse: Equatable, Sendable {
    /// Reused: the claim goes on with this record.
    case reuse(Manifest)
    /// Reused as `record` if the file still hashes to the record's digest; else claimed afresh,
    /// with `otherwise`'s uploads ended. A file that cannot be read again is neither: its claim is
    /// refused, and it stays queued under its record.
    case reuseIfHashHolds(record: Manifest, otherwise: StaleUploads)
    /// Claimed afresh: the file is not the version the record was made of (or no digest is
    /// recorded where one is wanted).
    case afresh(StaleUploads)

    /// The resumable uploads an outdated record began: kept so the uploader can end them, never
    /// resumed (a power cut can bring back the size and mtime an upload began with, while its
    /// parts or bytes came from another version).
    package struct StaleUploads: Equatable, Sendable {
        package var s3: S3UploadState?
        package var tus: TusUploadState?
    }

    /// `path`: where the file is claimed now; `size`, `mtime` (and `mtimeText` as records keep
    /// it): its fstat; `wantsDigest`: `digest = sha256`; `bootID`: this machine's boot;
    /// `granularity`: the file clock's tick (a hash taken within one tick of the file's last write
    /// may predate a same-size rewrite in that tick).
    package static func decide(_ manifest: Manifest, at path: RelativePath, size: Int64, mtime: Date, mtimeText: String,
                               wantsDigest: Bool, bootID: String?, granularity: TimeInterval) -> RecordReuse {
        let stale = StaleUploads(s3: manifest.s3.map { var state = $0; state.abandoned = true; return state },
                                 tus: manifest.remote?.tus.map { var state = $0; state.abandoned = true; return state })
        let unchanged = manifest.size == size && manifest.mtime == mtimeText
        guard unchanged, manifest.sha256 != nil || !wantsDigest else { return .afresh(stale) }
        var record = manifest
        // A record brought back under another name says so from its next write on.
        if record.outboxPath != path { record.setOutboxPath(path) }
        let anotherBoot = bootID != nil && record.claimedInBoot != bootID
        if let bootID, anotherBoot {
            // Claimed in another boot: an S3, tus or SFTP/FTP upload it began may hold bytes a power
            // cut has since undone in the file: ended, never resumed.
            record.s3?.abandoned = true
            record.remote?.tus?.abandoned = true
            record.remote?.remoteFile?.abandoned = true
            record.claimedInBoot = bootID
        }
        guard manifest.sha256 != nil, let hashedAt = Timestamp.parse(manifest.createdAt),
              anotherBoot || hashedAt.timeIntervalSince(mtime) < granularity else { return .reuse(record) }
        return .reuseIfHashHolds(record: record, otherwise: stale)
    }
}
