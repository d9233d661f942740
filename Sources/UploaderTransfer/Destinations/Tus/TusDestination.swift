import Foundation
import UploaderSupport
import UploaderConfig

/// tus 1.0: `TusUploader` (one run of its sequence, resumed from the manifest's `remote` upload URL and offset).
struct TusDestination: UploadDestination {
    let uploader: TusUploader

    init(_ uploader: TusUploader) { self.uploader = uploader }

    func send(_ upload: DestinationUpload, over transport: any Transport) -> UploadOutcome {
        uploader.upload(upload.source, resuming: upload.resume.saved.remote?.tus, values: upload.values,
                        request: upload.request, transport: transport) { progress in
            upload.resume.keep("tus") { $0.keepTus(progress) }
        }
    }
}

extension Manifest {
    /// Keeps a tus upload's record in `remote` (nil: none open any more).
    mutating func keepTus(_ progress: TusUploadState?) {
        guard let progress else {
            remote?.tus = nil
            return
        }
        if remote == nil { remote = Remote(url: progress.uploadURL) }
        remote?.tus = progress
    }
}
