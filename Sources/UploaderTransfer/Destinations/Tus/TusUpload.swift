import Foundation
import UploaderSupport
import UploaderConfig

/// One run of a file's tus upload, on the worker's thread: terminate an upload begun for other
/// content, resume (HEAD) or create (POST), then PATCH chunk by chunk from the server's offset,
/// recording each accepted offset through `record` before the next chunk goes.
struct TusUpload {
    let uploader: TusUploader
    let source: UploadSource
    let context: TusRequests.Context
    let progress: (@Sendable (Int64) -> Void)?
    let transport: Transport
    /// The upload as last reported through `record` (nil: none open).
    private(set) var state: TusUploadState?
    private let record: (TusUploadState?) -> Void
    /// Body bytes this run's PATCHes sent (the attempt's `bytes_sent`).
    private var bytesSent: Int64 = 0
    /// Whether a request of this run reached the server: a cut after it is an interrupted attempt.
    private var reached = false
    /// The last answer of this run, the one a finished upload reports.
    private var lastAnswer: UploadResponse?

    init(uploader: TusUploader, source: UploadSource, saved: TusUploadState?, context: TusRequests.Context,
         progress: (@Sendable (Int64) -> Void)?, transport: Transport, record: @escaping (TusUploadState?) -> Void) {
        self.uploader = uploader
        self.source = source
        self.state = saved
        self.context = context
        self.progress = progress
        self.transport = transport
        self.record = record
    }

    private var requests: TusRequests { uploader.requests }
    private var size: Int64 { source.size }
    /// Log fields of every line about this file, then `more`.
    private func fields(_ more: [(String, String)]) -> [(String, String)] {
        [("profile", uploader.profile.name), ("file", source.path.logSafe)] + more
    }

    /// Changes the state and hands it to the caller to keep durably.
    private mutating func save(_ new: TusUploadState?) {
        state = new
        record(new)
    }

    mutating func run() -> UploadOutcome {
        if let state, !state.matches(source) {
            terminate(reason: "file changed since the upload began")
        }
        if let state, let failed = resume(state) { return failed }
        if state == nil, let failed = create() { return failed }
        return sendChunks()
    }

    // MARK: Resume and create

    /// HEAD: continue from the offset the server reports. An upload it no longer has (404/410), or
    /// holds with another length, is replaced by a new one. Nil on success.
    private mutating func resume(_ state: TusUploadState) -> UploadOutcome? {
        let result = send(requests.head(context, url: state.uploadURL))
        guard case .success(let answer) = result, (200...299).contains(answer.status) else {
            if case .success(let answer) = result, [404, 410].contains(answer.status) {
                uploader.logger.log(.info, "tus server no longer has the upload; starting a new one",
                                    pairs: fields([("upload_url", state.uploadURL), ("http_status", String(answer.status))]))
                save(nil)
                return nil
            }
            return ended(result)
        }
        let offsetText = answer.headers["upload-offset"].map { PlantedBug.headOffsetReadZero.isActive ? "0" : $0 }
        guard let offset = offsetText.flatMap({ Int64($0) }), (0...size).contains(offset) else {
            return (result, .permanent(reason: "tus server answered HEAD without a valid Upload-Offset (is url a tus 1.0 endpoint?)"))
        }
        if let length = answer.headers["upload-length"].flatMap({ Int64($0) }), length != size {
            terminate(reason: "the server's upload is \(length) bytes, the file \(size)")
            return nil
        }
        var kept = state
        kept.offset = offset
        save(kept)
        uploader.logger.log(.info, "resuming tus upload",
                            pairs: fields([("upload_url", state.uploadURL), ("offset", String(offset)), ("size", String(size))]))
        return nil
    }

    /// Creation POST; the upload URL is recorded before any byte is sent. Nil on success.
    private mutating func create() -> UploadOutcome? {
        let metadata = [("filename", source.path.name.display), ("filetype", source.contentType), ("id", source.id)]
        let result = send(requests.create(context, length: size, metadata: metadata, id: source.id))
        guard case .success(let answer) = result, (200...299).contains(answer.status) else { return ended(result) }
        guard let location = answer.location, let url = URL(string: location, relativeTo: URL(string: context.creationURL))?.absoluteURL,
              let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return (result, .permanent(reason: "tus server answered the creation without a usable Location (is url a tus 1.0 creation endpoint?)"))
        }
        if scheme == "http" && context.creationURL.lowercased().hasPrefix("https:") {
            return (result, .permanent(reason: "tus server gave an http:// upload URL for an https:// url; the file is not sent in the clear "
                                       + "(behind a proxy, check that it passes X-Forwarded-Proto)"))
        }
        save(TusUploadState(uploadURL: url.absoluteString, offset: 0, fileSize: size, fileMtime: source.status.mtimeText))
        uploader.logger.log(.info, "tus upload created", pairs: fields([("upload_url", url.absoluteString), ("size", String(size))]))
        return nil
    }

    // MARK: Chunks

    private mutating func sendChunks() -> UploadOutcome {
        guard var current = state else { preconditionFailure("tus upload without state") }
        let checksum = current.offset < size && uploader.offersChecksum(context, transport: transport)
        while current.offset < size {
            if let change = source.changeSinceClaim() { return abandonForChange(change) }
            let start = current.offset
            let length = min(uploader.profile.tusChunkSize, size - start)
            var sha256: [UInt8]?
            if uploader.profile.digest == .sha256 {
                do {
                    sha256 = try source.sha256(offset: start, length: length, path: context.sourcePath ?? "")
                } catch {
                    return ended(.failure(.localRead("\(error)")))
                }
            }
            var request = requests.patch(context, url: current.uploadURL, offset: start,
                                         body: RequestBody([.file(fd: source.fd, offset: start, length: length)]),
                                         sha256: sha256, checksum: checksum)
            request.progress = progress.map { report in { @Sendable sent in report(start + sent) } }
            let result = send(request)
            guard case .success(let answer) = result, (200...299).contains(answer.status) else { return patchFailed(result) }
            guard let offset = answer.headers["upload-offset"].flatMap({ Int64($0) }), offset > start, offset <= size else {
                return ended(result, .retryLater(reason: "tus server accepted a PATCH without a valid Upload-Offset; the next attempt asks it (HEAD)",
                                                 retryAfter: nil))
            }
            current.offset = offset
            save(current)
        }
        if let change = source.changeSinceClaim() { return abandonForChange(change) }
        var answer = lastAnswer ?? UploadResponse(status: 204)
        answer.bytesSent = bytesSent
        answer.effectiveURL = current.uploadURL
        answer.location = current.uploadURL
        return (.success(answer), .sent(answer))
    }

    /// A PATCH that was not accepted. The server's offset is asked again on the next attempt,
    /// so whatever it kept of this chunk is not sent again.
    private mutating func patchFailed(_ result: Result<UploadResponse, TransferFailure>) -> UploadOutcome {
        guard case .success(let answer) = result else { return ended(result) }
        let reason = HTTPStatus.describe(answer.status, text: answer.statusText)
        switch answer.status {
        case 404, 410:
            save(nil)
            return ended(result, .retryLater(reason: reason + " (the server no longer has the upload; the next attempt creates a new one)",
                                             retryAfter: nil))
        case 409:
            return ended(result, .retryLater(reason: reason + " (offset conflict; the next attempt asks the server's offset)", retryAfter: nil))
        case 460:
            return ended(result, .retryLater(reason: "HTTP 460 Checksum Mismatch", retryAfter: nil))
        default:
            return ended(result)
        }
    }

    // MARK: Helpers

    /// Sends one request of the sequence and notes what it tells about the run.
    private mutating func send(_ request: UploadRequest) -> Result<UploadResponse, TransferFailure> {
        let result = transport.send(request)
        switch result {
        case .success(let answer):
            reached = true
            lastAnswer = answer
            if request.method == .patch { bytesSent += answer.bytesSent }
        case .failure(.broken(_, let sent)):
            reached = true
            bytesSent += sent
        case .failure(.cancelled(let sent, let connected)):
            reached = reached || connected
            bytesSent += sent
        default:
            break
        }
        return result
    }

    /// The run ends with `result`: its byte count becomes the run's, and an interruption after
    /// any request reached the server is one that connected. `disposition` defaults to the usual one.
    private func ended(_ result: Result<UploadResponse, TransferFailure>, _ disposition: Disposition? = nil) -> UploadOutcome {
        var result = result
        switch result {
        case .success(var answer):
            answer.bytesSent = bytesSent
            result = .success(answer)
        case .failure(.broken(let message, _)):
            result = .failure(.broken(message, bytesSent: bytesSent))
        case .failure(.cancelled(_, let connected)):
            result = .failure(.cancelled(bytesSent: bytesSent, connected: connected || reached))
        case .failure:
            break
        }
        return (result, disposition ?? Disposition.decide(result, now: uploader.clock.now))
    }

    private mutating func abandonForChange(_ change: String) -> UploadOutcome {
        let reason = "file changed during upload (\(change))"
        terminate(reason: reason)
        return (.failure(.broken(reason, bytesSent: bytesSent)), .retryLater(reason: reason, retryAfter: nil))
    }

    /// DELETE of the open upload, then forgets it.
    private mutating func terminate(reason: String) {
        guard let state else { return }
        uploader.terminate(state, context: context, transport: transport, reason: reason)
        save(nil)
    }
}
