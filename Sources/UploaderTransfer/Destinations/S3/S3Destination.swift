import Foundation
import UploaderSupport
import UploaderConfig

/// S3: `S3Uploader` (one PUT, or a multipart upload resumed from the manifest's `s3` record).
struct S3Destination: UploadDestination {
    let uploader: S3Uploader

    init(_ uploader: S3Uploader) { self.uploader = uploader }

    func send(_ upload: DestinationUpload, over transport: any Transport) -> UploadOutcome {
        uploader.upload(upload.source, resuming: upload.resume.saved.s3, values: upload.values,
                        request: upload.request, transport: transport) { progress in
            upload.resume.keep("S3 multipart") { $0.s3 = progress }
        }
    }
}
