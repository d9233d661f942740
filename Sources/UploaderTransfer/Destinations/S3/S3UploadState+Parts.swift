import UploaderSupport

/// A multipart upload in progress as `S3Uploader` reports it through its `record` callback and
/// takes it back to resume: the manifest's `s3` record itself.
extension S3UploadState {
    /// Records a finished part (replacing an older record of the same number), kept in order.
    mutating func record(_ part: Part) {
        parts.removeAll { $0.number == part.number }
        parts.append(part)
        parts.sort { $0.number < $1.number }
    }
}
