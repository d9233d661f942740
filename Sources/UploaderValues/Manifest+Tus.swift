/// A tus upload in progress, kept in the manifest's `remote` object (`upload_url`, `offset`,
/// `file_size`, `file_mtime`) so a crash or an offline spell resumes it with a HEAD instead of
/// starting over. Written before the first byte is sent and after each accepted PATCH.
/// `TusDestination` keeps it as the server accepts each chunk.
///
/// `file_size` and `file_mtime` are the file's when the upload began, as with S3's
/// `S3UploadState`: a file that differs now has its old upload terminated and gets a new one.
package struct TusUploadState: Sendable, Equatable {
    package var uploadURL: String
    /// Bytes the server has confirmed.
    package var offset: Int64
    package var fileSize: Int64
    package var fileMtime: String
    /// Kept only to be terminated: the file was claimed afresh since (its content changed), so
    /// the bytes the server holds may be of another version, whatever the file looks like later.
    package var abandoned: Bool? = nil

    package init(uploadURL: String, offset: Int64, fileSize: Int64, fileMtime: String) {
        self.uploadURL = uploadURL
        self.offset = offset
        self.fileSize = fileSize
        self.fileMtime = fileMtime
    }

    enum CodingKeys: String, CodingKey {
        case uploadURL = "upload_url", offset, fileSize = "file_size", fileMtime = "file_mtime", abandoned
    }

    /// Read from the `remote` object; nil when it holds no `upload_url` (not a tus upload).
    init?(fromRemote decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let url = try c.decodeIfPresent(String.self, forKey: .uploadURL) else { return nil }
        self.init(uploadURL: url, offset: try c.decode(Int64.self, forKey: .offset),
                  fileSize: try c.decode(Int64.self, forKey: .fileSize), fileMtime: try c.decode(String.self, forKey: .fileMtime))
        abandoned = try c.decodeIfPresent(Bool.self, forKey: .abandoned)
    }

    /// Adds the fields to the `remote` object being written.
    func write(into w: inout JSONObjectWriter) {
        w.field(CodingKeys.uploadURL.rawValue, uploadURL)
        w.field(CodingKeys.offset.rawValue, offset)
        w.field(CodingKeys.fileSize.rawValue, fileSize)
        w.field(CodingKeys.fileMtime.rawValue, fileMtime)
        if abandoned == true { w.field(CodingKeys.abandoned.rawValue, true) }
    }
}
