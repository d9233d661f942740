import UploaderSupport
import UploaderConfig

/// A multipart upload in progress: what `S3Uploader` reports through its `record` callback for
/// the caller to keep durably (the manifest's `s3` object), and takes back to resume it after a
/// crash or an offline spell instead of starting over.
///
/// `key` and `partSize` are kept because a resumed upload must use the same ones even if the
/// key template renders differently now (`{date}`) or the config changed.
package struct S3MultipartProgress: Sendable, Equatable {
    /// One finished part: its number (1-based) and the ETag the store returned.
    package struct Part: Sendable, Equatable {
        package var number: Int
        package var etag: String

        package init(number: Int, etag: String) {
            self.number = number
            self.etag = etag
        }
    }

    package var uploadID: String
    package var bucket: String
    package var key: String
    package var partSize: Int64
    /// The file's size and mtime (as `FileSystem.Status.mtimeText`) when the upload began:
    /// a file that differs now gets a new upload.
    package var fileSize: Int64
    package var fileMtime: String
    package var parts: [Part]

    package init(uploadID: String, bucket: String, key: String, partSize: Int64, fileSize: Int64, fileMtime: String, parts: [Part] = []) {
        self.uploadID = uploadID
        self.bucket = bucket
        self.key = key
        self.partSize = partSize
        self.fileSize = fileSize
        self.fileMtime = fileMtime
        self.parts = parts
    }

    /// Records a finished part (replacing an older record of the same number), kept in order.
    package mutating func record(_ part: Part) {
        parts.removeAll { $0.number == part.number }
        parts.append(part)
        parts.sort { $0.number < $1.number }
    }
}
