/// The manifest's `s3` object: a multipart upload in progress, so a crash or an offline spell
/// resumes it instead of starting over. Present only while a multipart upload is open.
/// `S3Destination` keeps it as the parts are stored.
///
/// `key` and `part_size` are kept because a resumed upload must use the same ones even if the
/// key template renders differently now (`{date}`) or the config changed.
package struct S3UploadState: Codable, Sendable, Equatable {
    /// One finished part: its number (1-based) and the ETag the store returned.
    package struct Part: Codable, Sendable, Equatable {
        package var number: Int
        package var etag: String

        package init(number: Int, etag: String) {
            self.number = number
            self.etag = etag
        }

        enum CodingKeys: String, CodingKey { case number, etag }

        package func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(number, forKey: .number)
            try c.encode(etag, forKey: .etag)
        }
    }

    package var uploadID: String
    package var bucket: String
    package var key: String
    package var partSize: Int64
    /// The file's size and mtime when the upload began: a file that differs now gets a new upload.
    package var fileSize: Int64
    package var fileMtime: String
    package var parts: [Part]
    /// Kept only to be aborted: the file was claimed afresh since (its content changed), so the
    /// parts the store holds may be of other bytes, whatever the file looks like later.
    package var abandoned: Bool? = nil

    package init(uploadID: String, bucket: String, key: String, partSize: Int64, fileSize: Int64, fileMtime: String, parts: [Part] = []) {
        self.uploadID = uploadID
        self.bucket = bucket
        self.key = key
        self.partSize = partSize
        self.fileSize = fileSize
        self.fileMtime = fileMtime
        self.parts = parts
    }

    enum CodingKeys: String, CodingKey {
        case uploadID = "upload_id", bucket, key, partSize = "part_size", fileSize = "file_size", fileMtime = "file_mtime", parts, abandoned
    }

    package func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(uploadID, forKey: .uploadID)
        try c.encode(bucket, forKey: .bucket)
        try c.encode(key, forKey: .key)
        try c.encode(partSize, forKey: .partSize)
        try c.encode(fileSize, forKey: .fileSize)
        try c.encode(fileMtime, forKey: .fileMtime)
        try c.encode(parts, forKey: .parts)
        if abandoned == true { try c.encode(true, forKey: .abandoned) }
    }
}
