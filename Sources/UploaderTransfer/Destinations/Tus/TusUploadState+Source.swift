import UploaderSupport

/// A tus upload in progress as `TusUploader` reports it through its `record` callback and takes
/// it back to resume with a HEAD: the manifest's record (`remote.upload_url`, `remote.offset`).
extension TusUploadState {
    /// Whether this upload was begun for the file as it is now (never one kept only to be ended).
    func matches(_ source: UploadSource) -> Bool {
        abandoned != true && fileSize == source.size && fileMtime == source.status.mtimeText
    }
}
