import Foundation

/// The JSON sidecar `NAME.manifest.json`: the durable record of one file's upload.
///
/// After a crash the manifests on disk are the single source of truth, so every field a
/// recovery needs lives here. Encoded with explicit `null`s so the shape never varies.
package struct Manifest: Decodable, Sendable, Equatable {
    package enum State: String, Codable, Sendable, CaseIterable {
        case queued, uploading, sent, retry, failed
    }

    /// One HTTP request that reached the destination (or was cut short by our own shutdown).
    package struct Attempt: Decodable, Sendable, Equatable {
        package var startedAt: String
        package var endedAt: String?
        package var bytesSent: Int64
        package var httpStatus: Int?
        package var error: String?
        package var retryable: Bool?
        package var interrupted: Bool?
        /// The destination refused our credentials (DESIGN §12 "Rejected"): not the file's fault, not counted.
        package var rejected: Bool?

        package init(startedAt: String, endedAt: String? = nil, bytesSent: Int64 = 0, httpStatus: Int? = nil,
                     error: String? = nil, retryable: Bool? = nil, interrupted: Bool? = nil, rejected: Bool? = nil) {
            self.startedAt = startedAt
            self.endedAt = endedAt
            self.bytesSent = bytesSent
            self.httpStatus = httpStatus
            self.error = error
            self.retryable = retryable
            self.interrupted = interrupted
            self.rejected = rejected
        }

        enum CodingKeys: String, CodingKey {
            case startedAt = "started_at", endedAt = "ended_at", bytesSent = "bytes_sent"
            case httpStatus = "http_status", error, retryable, interrupted, rejected
        }

    }

    /// What the destination answered to the successful (or last) request.
    package struct Remote: Decodable, Sendable, Equatable {
        package var url: String
        package var httpStatus: Int?
        package var etag: String?
        package var location: String?
        package var response: String?
        /// A tus upload in progress or done (`upload_url`, `offset`, …); nil for other protocols.
        package var tus: TusUploadState?
        /// An SFTP or FTPS upload (`protocol`, `remote_path`, `bytes_confirmed`, …); nil for other protocols.
        package var remoteFile: RemoteFileState?

        package init(url: String, httpStatus: Int? = nil, etag: String? = nil, location: String? = nil, response: String? = nil,
                     tus: TusUploadState? = nil, remoteFile: RemoteFileState? = nil) {
            self.url = url
            self.httpStatus = httpStatus
            self.etag = etag
            self.location = location
            self.response = response
            self.tus = tus
            self.remoteFile = remoteFile
        }

        enum CodingKeys: String, CodingKey {
            case url, httpStatus = "http_status", etag, location, response
        }

        package init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            url = try c.decode(String.self, forKey: .url)
            httpStatus = try c.decodeIfPresent(Int.self, forKey: .httpStatus)
            etag = try c.decodeIfPresent(String.self, forKey: .etag)
            location = try c.decodeIfPresent(String.self, forKey: .location)
            response = try c.decodeIfPresent(String.self, forKey: .response)
            tus = try TusUploadState(fromRemote: decoder)
            remoteFile = try RemoteFileState(fromRemote: decoder)
        }
    }

    package var version: Int = 1
    package var id: String
    package var profile: String
    package var path: String
    package var pathBase64: String?
    package var size: Int64
    package var mtime: String
    package var sha256: String?
    package var contentType: String
    package var state: State
    package var createdAt: String
    package var attempts: [Attempt] = []
    package var nextAttemptAt: String? = nil
    package var lastError: String? = nil
    package var storedAs: String? = nil
    package var remote: Remote? = nil
    package var sentAt: String? = nil
    /// The hook a final state made due and each run of it (see `Manifest+Hooks.swift`); nil
    /// (no `hooks` key) when none was due — written before hooks were recorded, or with none configured.
    package var hooks: [HookRun]? = nil
    /// How many attempts there were when an operator ran `uploader retry`: those stay in the
    /// history but no longer count toward `max_attempts` or the backoff. Omitted until then.
    package var attemptsBeforeRetry: Int? = nil
    /// An S3 multipart upload in progress (upload id, finished parts), for resuming; see `S3UploadState`.
    package var s3: S3UploadState? = nil
    /// The kernel's boot id at the record's last claim. A claim in another boot hashes the file
    /// again and never resumes an S3 or tus upload the record holds: a power cut may have undone
    /// writes never fsynced, which the hash or the parts already sent were taken from.
    package var claimedInBoot: String? = nil

    package init(id: String, profile: String, path: RelativePath, size: Int64, mtime: String,
                 sha256: String?, contentType: String, state: State, createdAt: String) {
        self.id = id
        self.profile = profile
        self.path = path.display
        self.pathBase64 = path.isValidUTF8 ? nil : path.base64
        self.size = size
        self.mtime = mtime
        self.sha256 = sha256
        self.contentType = contentType
        self.state = state
        self.createdAt = createdAt
    }

    /// Names `path` as the file's place in the outbox (a file brought back under another name).
    package mutating func setOutboxPath(_ path: RelativePath) {
        self.path = path.display
        pathBase64 = path.isValidUTF8 ? nil : path.base64
    }

    /// Attempts that count toward `max_attempts` (those cut by our own shutdown or by their file
    /// changing under them, and those whose credentials the destination refused, do not).
    package var countedAttempts: Int {
        attempts.dropFirst(min(attemptsBeforeRetry ?? 0, attempts.count)).filter { $0.interrupted != true && $0.rejected != true }.count
    }

    /// Gives an attempt that has no end (cut by a crash or our shutdown) its end, marked interrupted.
    package mutating func closeOpenAttempt(at date: Date, interrupted: Bool) {
        guard let index = attempts.indices.last, attempts[index].endedAt == nil else { return }
        attempts[index].endedAt = Timestamp.format(date)
        if interrupted { attempts[index].interrupted = true }
    }

    enum CodingKeys: String, CodingKey {
        case version, id, profile, path, pathBase64 = "path_base64", size, mtime, sha256
        case contentType = "content_type", state, createdAt = "created_at", attempts
        case nextAttemptAt = "next_attempt_at", lastError = "last_error", storedAs = "stored_as"
        case remote, sentAt = "sent_at", hooks, attemptsBeforeRetry = "attempts_before_retry", s3, claimedInBoot = "boot_id"
    }

    package init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decode(Int.self, forKey: .version)
        id = try c.decode(String.self, forKey: .id)
        profile = try c.decode(String.self, forKey: .profile)
        path = try c.decode(String.self, forKey: .path)
        pathBase64 = try c.decodeIfPresent(String.self, forKey: .pathBase64)
        size = try c.decode(Int64.self, forKey: .size)
        mtime = try c.decode(String.self, forKey: .mtime)
        sha256 = try c.decodeIfPresent(String.self, forKey: .sha256)
        contentType = try c.decode(String.self, forKey: .contentType)
        state = try c.decode(State.self, forKey: .state)
        createdAt = try c.decode(String.self, forKey: .createdAt)
        attempts = try c.decodeIfPresent([Attempt].self, forKey: .attempts) ?? []
        nextAttemptAt = try c.decodeIfPresent(String.self, forKey: .nextAttemptAt)
        lastError = try c.decodeIfPresent(String.self, forKey: .lastError)
        storedAs = try c.decodeIfPresent(String.self, forKey: .storedAs)
        remote = try c.decodeIfPresent(Remote.self, forKey: .remote)
        sentAt = try c.decodeIfPresent(String.self, forKey: .sentAt)
        hooks = try c.decodeIfPresent([HookRun].self, forKey: .hooks)
        attemptsBeforeRetry = try c.decodeIfPresent(Int.self, forKey: .attemptsBeforeRetry)
        s3 = try c.decodeIfPresent(S3UploadState.self, forKey: .s3)
        claimedInBoot = try c.decodeIfPresent(String.self, forKey: .claimedInBoot)
    }


    /// Compact JSON with a trailing newline, keys in the contract's order, `null` for nil.
    /// The manifest as written to disk: one JSON object, then a newline.
    package func encodedLine() throws -> [UInt8] {
        var w = JSONObjectWriter()
        w.field("version", version)
        w.field("id", id)
        w.field("profile", profile)
        w.field("path", path)
        if let pathBase64 { w.field("path_base64", pathBase64) }
        w.field("size", size)
        w.field("mtime", mtime)
        w.field("sha256", sha256)
        w.field("content_type", contentType)
        w.field("state", state.rawValue)
        w.field("created_at", createdAt)
        w.field("attempts", array: attempts.map(\.json))
        w.field("next_attempt_at", nextAttemptAt)
        w.field("last_error", lastError)
        w.field("stored_as", storedAs)
        w.field("remote", object: remote?.json)
        w.field("sent_at", sentAt)
        if let hooks { w.field("hooks", array: hooks.map(\.json)) }
        if let attemptsBeforeRetry { w.field("attempts_before_retry", attemptsBeforeRetry) }
        if let s3 { w.field("s3", json: Array(try JSONEncoder().encode(s3))) }
        if let claimedInBoot { w.field("boot_id", claimedInBoot) }
        return w.finishedLine()
    }

    package static func decode(_ data: Data) throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: data)
    }
}

extension Manifest.Attempt {
    var json: JSONObjectWriter {
        var w = JSONObjectWriter()
        w.field("started_at", startedAt)
        w.field("ended_at", endedAt)
        w.field("bytes_sent", bytesSent)
        w.field("http_status", httpStatus)
        w.field("error", error)
        w.field("retryable", retryable)
        if let interrupted { w.field("interrupted", interrupted) }
        if let rejected { w.field("rejected", rejected) }
        return w
    }
}

extension Manifest.Remote {
    var json: JSONObjectWriter {
        var w = JSONObjectWriter()
        w.field("url", url)
        w.field("http_status", httpStatus)
        w.field("etag", etag)
        w.field("location", location)
        w.field("response", response)
        tus?.write(into: &w)
        remoteFile?.write(into: &w)
        return w
    }
}

extension Manifest {
    /// The file's name in the outbox, as it was claimed (exact bytes when the name is not UTF-8).
    package var outboxPath: RelativePath {
        pathBase64.flatMap { Data(base64Encoded: $0) }.map { RelativePath(bytes: Array($0)) } ?? RelativePath(path)
    }
}
