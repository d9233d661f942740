import Foundation
import UploaderSupport
import UploaderConfig

/// S3: `S3Uploader` (one PUT, or a multipart upload resumed from the manifest's `s3` record).
struct S3Destination: UploadDestination {
    let uploader: S3Uploader

    init(_ uploader: S3Uploader) { self.uploader = uploader }

    func send(_ upload: DestinationUpload, over transport: any Transport) -> UploadOutcome {
        uploader.upload(upload.source, resuming: upload.resume.saved.s3.map(S3MultipartProgress.init), values: upload.values,
                        request: upload.request, transport: transport) { progress in
            upload.resume.keep("S3 multipart") { $0.s3 = progress.map(S3UploadState.init) }
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
