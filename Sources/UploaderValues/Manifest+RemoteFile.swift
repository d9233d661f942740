/// An SFTP or FTPS upload in progress or done, kept in the manifest's `remote` object
/// (`protocol`, `remote_path`, `temp_path`, `bytes_confirmed`, `file_size`, `file_mtime`) so a
/// later attempt continues from the temporary file's size on the server instead of starting over.
///
/// `bytes_confirmed` is what the server was last seen to hold under `temp_path` (its size after an
/// upload, or the whole file once renamed onto `remote_path`). `file_size` and `file_mtime` are the
/// file's when those bytes went: a file that differs now starts the temporary file afresh.
package struct RemoteFileState: Sendable, Equatable {
    /// `sftp`, `ftps` or `ftp`.
    package var scheme: String
    /// The final name on the server (as the server's path, not percent-encoded).
    package var remotePath: String
    /// The temporary name the bytes go to before the rename.
    package var tempPath: String
    package var bytesConfirmed: Int64
    package var fileSize: Int64
    package var fileMtime: String
    /// Renamed onto `remote_path`: the file is published.
    package var published: Bool = false
    /// Claimed again in another boot: a power cut may have undone bytes of the file that the
    /// temporary file holds, so what the server holds is never resumed (nor taken for published).
    package var abandoned: Bool? = nil

    package init(scheme: String, remotePath: String, tempPath: String, bytesConfirmed: Int64, fileSize: Int64, fileMtime: String) {
        self.scheme = scheme
        self.remotePath = remotePath
        self.tempPath = tempPath
        self.bytesConfirmed = bytesConfirmed
        self.fileSize = fileSize
        self.fileMtime = fileMtime
    }

    enum CodingKeys: String, CodingKey {
        case scheme = "protocol", remotePath = "remote_path", tempPath = "temp_path", bytesConfirmed = "bytes_confirmed"
        case fileSize = "file_size", fileMtime = "file_mtime", published, abandoned
    }

    /// Read from the `remote` object; nil when it holds no `remote_path` (another protocol).
    init?(fromRemote decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let path = try c.decodeIfPresent(String.self, forKey: .remotePath) else { return nil }
        self.init(scheme: try c.decode(String.self, forKey: .scheme), remotePath: path,
                  tempPath: try c.decode(String.self, forKey: .tempPath), bytesConfirmed: try c.decode(Int64.self, forKey: .bytesConfirmed),
                  fileSize: try c.decode(Int64.self, forKey: .fileSize), fileMtime: try c.decode(String.self, forKey: .fileMtime))
        published = try c.decodeIfPresent(Bool.self, forKey: .published) ?? false
        abandoned = try c.decodeIfPresent(Bool.self, forKey: .abandoned)
    }

    /// Adds the fields to the `remote` object being written.
    func write(into w: inout JSONObjectWriter) {
        w.field(CodingKeys.scheme.rawValue, scheme)
        w.field(CodingKeys.remotePath.rawValue, remotePath)
        w.field(CodingKeys.tempPath.rawValue, tempPath)
        w.field(CodingKeys.bytesConfirmed.rawValue, bytesConfirmed)
        w.field(CodingKeys.fileSize.rawValue, fileSize)
        w.field(CodingKeys.fileMtime.rawValue, fileMtime)
        if published { w.field(CodingKeys.published.rawValue, true) }
        if abandoned == true { w.field(CodingKeys.abandoned.rawValue, true) }
    }
}
