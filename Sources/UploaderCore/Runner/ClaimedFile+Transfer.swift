import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// Where the spool's records meet the transfer layer's values. The transfer layer never sees a
/// `ClaimedFile` or a `Manifest`; the runner hands it an `UploadSource` and keeps what it
/// reports (S3 multipart progress) in the manifest.
extension ClaimedFile {
    /// This file as the transfer layer sends it: the claimed descriptor and the manifest's facts.
    var uploadSource: UploadSource {
        UploadSource(fd: fd, status: status, path: path, id: manifest.id, sha256: manifest.sha256,
                     contentType: manifest.contentType) { [fs] fd, path in try fs.status(fd: fd, path: path) }
    }

    /// The S3 multipart upload recorded in the manifest, to resume.
    var s3Progress: S3MultipartProgress? { manifest.s3.map(S3MultipartProgress.init) }

    /// Keeps `progress` in the manifest and writes it durably; a failure only costs resumability.
    func recordS3Progress(_ progress: S3MultipartProgress?, in spool: Spool, logger: Logger, profile: String) {
        manifest.s3 = progress.map(S3UploadState.init)
        do {
            try spool.writeManifest(manifest, for: path, in: .outbox)
        } catch {
            logger.warn("cannot record S3 upload progress in the manifest; a restart would send every part again",
                        ["profile": profile, "file": path.logSafe, "error": "\(error)"])
        }
    }
}

extension S3UploadState {
    init(_ progress: S3MultipartProgress) {
        self.init(uploadID: progress.uploadID, bucket: progress.bucket, key: progress.key, partSize: progress.partSize,
                  fileSize: progress.fileSize, fileMtime: progress.fileMtime,
                  parts: progress.parts.map { Part(number: $0.number, etag: $0.etag) })
    }
}

extension S3MultipartProgress {
    init(_ state: S3UploadState) {
        self.init(uploadID: state.uploadID, bucket: state.bucket, key: state.key, partSize: state.partSize,
                  fileSize: state.fileSize, fileMtime: state.fileMtime,
                  parts: state.parts.map { Part(number: $0.number, etag: $0.etag) })
    }
}
