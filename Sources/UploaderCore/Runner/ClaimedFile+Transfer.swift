import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// Where the spool's records meet the transfer layer's values. The transfer layer never sees a
/// `ClaimedFile` or a `Manifest`; the runner hands it an `UploadSource` and keeps what it
/// reports (S3 multipart and tus progress) in the manifest.
extension ClaimedFile {
    /// This file as the transfer layer sends it: the claimed descriptor and the manifest's facts.
    var uploadSource: UploadSource {
        UploadSource(fd: fd, status: status, path: path, id: manifest.id, sha256: manifest.sha256,
                     contentType: manifest.contentType) { [fs] fd, path in try fs.status(fd: fd, path: path) }
    }

    /// The S3 multipart upload recorded in the manifest, to resume.
    var s3Progress: S3MultipartProgress? { manifest.s3.map(S3MultipartProgress.init) }

    /// The tus upload recorded in the manifest, to resume.
    var tusProgress: TusProgress? { manifest.remote?.tus.map(TusProgress.init) }

    /// Applies `edit` (the upload's progress) to the manifest and writes it durably; a failure
    /// only costs resumability.
    func recordProgress(in spool: Spool, logger: Logger, profile: String, what: String, _ edit: (inout Manifest) -> Void) {
        edit(&manifest)
        do {
            try spool.writeManifest(manifest, for: path, in: .outbox)
        } catch {
            logger.warn("cannot record \(what) upload progress in the manifest; a restart would send its bytes again",
                        ["profile": profile, "file": path.logSafe, "error": "\(error)"])
        }
    }
}

extension Manifest {
    /// Keeps a tus upload's record in `remote` (nil: none open any more).
    mutating func keepTus(_ progress: TusProgress?) {
        guard let progress else {
            remote?.tus = nil
            return
        }
        if remote == nil { remote = Remote(url: progress.uploadURL) }
        remote?.tus = TusUploadState(uploadURL: progress.uploadURL, offset: progress.offset,
                                     fileSize: progress.fileSize, fileMtime: progress.fileMtime)
    }
}

extension TusProgress {
    init(_ state: TusUploadState) {
        self.init(uploadURL: state.uploadURL, offset: state.offset, fileSize: state.fileSize, fileMtime: state.fileMtime)
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
