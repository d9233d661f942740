import UploaderSupport
import UploaderConfig

/// A tus upload in progress: what `TusUploader` reports through its `record` callback for the
/// caller to keep durably (the manifest's `remote.upload_url` and `remote.offset`), and takes
/// back to resume it with a HEAD after a crash, an offline spell, a stall or a 5xx.
///
/// `fileSize` and `fileMtime` bind the upload to the content it began with: a file that
/// differs now has its old upload terminated (DELETE) and gets a new one.
package struct TusProgress: Sendable, Equatable {
    /// The upload's own URL, from the creation's `Location` answer.
    package var uploadURL: String
    /// Bytes the server has confirmed (the `Upload-Offset` of its last answer).
    package var offset: Int64
    package var fileSize: Int64
    /// As `FileSystem.Status.mtimeText`.
    package var fileMtime: String

    package init(uploadURL: String, offset: Int64, fileSize: Int64, fileMtime: String) {
        self.uploadURL = uploadURL
        self.offset = offset
        self.fileSize = fileSize
        self.fileMtime = fileMtime
    }

    /// Whether this upload was begun for the file as it is now.
    func matches(_ source: UploadSource) -> Bool {
        fileSize == source.size && fileMtime == source.status.mtimeText
    }
}
