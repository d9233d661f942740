import Foundation
import UploaderSupport
import UploaderConfig

/// One file's multipart upload, run on the worker's thread: resume or create, send the missing
/// parts `part_concurrency` at a time (each on a thread with its own transport, each sent once),
/// record each finished part through `record`, then complete — or abort.
struct S3MultipartUpload {
    let uploader: S3Uploader
    let source: UploadSource
    var context: S3Requests.Context
    let progress: (@Sendable (Int64) -> Void)?
    let transport: Transport
    /// The upload's state as last reported through `record` (nil: none open).
    private(set) var state: S3UploadState?
    /// A request of this attempt was answered: the store has seen it, so a cancel after it ends
    /// an attempt that counts as made, whichever request it cuts.
    private var answered = false
    private let record: (S3UploadState?) -> Void

    init(uploader: S3Uploader, source: UploadSource, saved: S3UploadState?, context: S3Requests.Context,
         progress: (@Sendable (Int64) -> Void)?, transport: Transport, record: @escaping (S3UploadState?) -> Void) {
        self.uploader = uploader
        self.source = source
        self.state = saved
        self.context = context
        self.progress = progress
        self.transport = transport
        self.record = record
    }

    private var requests: S3Requests { uploader.requests }
    private var log: Logger { uploader.logger }
    private var size: Int64 { source.size }

    /// One request of the coordinator's, on the worker's transport.
    private mutating func send(_ request: UploadRequest) -> Result<UploadResponse, TransferFailure> {
        let result = transport.send(request)
        if case .success = result { answered = true }
        return result
    }

    /// Changes the state and hands it to the caller to keep durably.
    private mutating func save(_ new: S3UploadState?) {
        state = new
        record(new)
    }

    mutating func run() -> S3Uploader.Outcome {
        let outcome = runSteps()
        guard answered, case .interrupted(connected: false) = outcome.disposition else { return outcome }
        let bytes: Int64
        if case .failure(.cancelled(let sent, _)) = outcome.result { bytes = sent } else { bytes = 0 }
        return (.failure(.cancelled(bytesSent: bytes, connected: true)), .interrupted(connected: true))
    }

    private mutating func runSteps() -> S3Uploader.Outcome {
        if let state, state.abandoned == true || state.bucket != uploader.target.bucket || state.fileSize != size
            || state.fileMtime != source.status.mtimeText {
            if state.bucket == uploader.target.bucket {
                uploader.abort(state, context: context, transport: transport, reason: "file changed since the upload began")
            }
            save(nil)
        }
        if let state {
            context.key = Array(state.key.utf8)
            if let failed = resume(state) { return failed }
        }
        if state == nil, let failed = create() { return failed }
        guard let state else { preconditionFailure("multipart upload without state") }

        let sent = sendMissingParts(state)
        if let failed = sent.failure { return failed }
        if let change = source.changeSinceClaim() { return abandonForChange(change, bytes: sent.bytes) }
        return complete(bytesSent: sent.bytes)
    }

    // MARK: Create and resume

    /// CreateMultipartUpload; records the new upload id in the manifest. Nil on success.
    private mutating func create() -> S3Uploader.Outcome? {
        let result = send(requests.createMultipartUpload(context))
        let disposition = uploader.decide(result)
        guard case .sent(let response) = disposition else { return (result, disposition) }
        guard let uploadID = S3XML(response.body)?.first("UploadId"), !uploadID.isEmpty else {
            return (result, .permanent(reason: "S3 CreateMultipartUpload answered without an UploadId"))
        }
        let partSize = uploader.target.partSize(forFileSize: size)
        save(S3UploadState(uploadID: uploadID, bucket: uploader.target.bucket, key: String(decoding: context.key, as: UTF8.self),
                                 partSize: partSize, fileSize: size, fileMtime: source.status.mtimeText))
        log.info("S3 multipart upload started", ["profile": uploader.profile.name, "file": source.path.logSafe, "upload_id": uploadID,
                                                  "parts": String(Self.partCount(size: size, partSize: partSize)), "part_size": String(partSize)])
        return nil
    }

    /// Asks ListParts what the store already holds and keeps exactly those parts (with the
    /// expected size) as done. An upload the store no longer knows starts over. Nil on success.
    private mutating func resume(_ state: S3UploadState) -> S3Uploader.Outcome? {
        var listed: [Int: (etag: String, size: Int64)] = [:]
        var marker = 0
        while true {
            let result = send(requests.listParts(context, uploadID: state.uploadID, marker: marker))
            let disposition = uploader.decide(result)
            guard case .sent(let response) = disposition else {
                if case .success(let r) = result, S3Error(status: r.status, body: r.body)?.code == "NoSuchUpload" || r.status == 404 {
                    log.info("S3 multipart upload no longer exists; starting a new one",
                             ["profile": uploader.profile.name, "file": source.path.logSafe, "upload_id": state.uploadID])
                    save(nil)
                    return nil
                }
                return (result, disposition)
            }
            let xml = S3XML(response.body)
            for part in PlantedBug.listPartsReadEmpty.isActive ? [] : xml?.records("Part") ?? [] {
                guard let number = part["PartNumber"].flatMap({ Int($0) }), let etag = part["ETag"],
                      let partSize = part["Size"].flatMap({ Int64($0) }) else { continue }
                listed[number] = (etag, partSize)
            }
            guard xml?.first("IsTruncated") == "true", let next = xml?.first("NextPartNumberMarker").flatMap({ Int($0) }), next > marker else { break }
            marker = next
        }
        var kept = state
        kept.parts = []
        for number in 1...Self.partCount(size: size, partSize: state.partSize) {
            if let part = listed[number], part.size == Self.range(of: number, size: size, partSize: state.partSize).length {
                kept.record(.init(number: number, etag: part.etag))
            }
        }
        save(kept)
        log.info("resuming S3 multipart upload", ["profile": uploader.profile.name, "file": source.path.logSafe, "upload_id": state.uploadID,
                                                  "parts_done": String(kept.parts.count),
                                                  "parts_total": String(Self.partCount(size: size, partSize: state.partSize))])
        return nil
    }

    // MARK: Parts

    /// Sends every part not yet done; returns the bytes sent and, if the upload cannot go on now, the outcome.
    private mutating func sendMissingParts(_ state: S3UploadState) -> (bytes: Int64, failure: S3Uploader.Outcome?) {
        let done = Set(state.parts.map(\.number))
        let jobs = (1...Self.partCount(size: size, partSize: state.partSize)).filter { !done.contains($0) }.map { number in
            let range = Self.range(of: number, size: size, partSize: state.partSize)
            return S3PartBoard.Job(number: number, offset: range.offset, length: range.length)
        }
        guard !jobs.isEmpty else { return (0, nil) }
        let alreadySent = state.parts.reduce(Int64(0)) { $0 + Self.range(of: $1.number, size: size, partSize: state.partSize).length }
        let board = S3PartBoard(jobs: jobs, scheduler: uploader.threads.scheduler)
        let stop = CancellationFlag(), drain = CancellationFlag()
        /// Cuts the parts in flight short, and starts no other.
        func halt() {
            drain.cancel()
            stop.cancel()
        }
        let sender = S3PartSender(uploader: uploader, context: context, uploadID: state.uploadID, source: source, board: board, stop: stop,
                                  drain: drain,
                                  progress: progress.map { report in { @Sendable sent in report(alreadySent + sent) } })
        for index in 0..<min(uploader.target.partConcurrency, jobs.count) {
            board.threadStarted()
            uploader.threads.scheduler.startThread(named: "\(uploader.profile.name)-s3part-\(index)") { sender.runThread() }
        }

        var bytes: Int64 = 0
        var failure: (disposition: Disposition, response: UploadResponse?)?
        var change: String?
        _ = board.wakeOnCancel(context.cancellation)
        defer { board.forgetCancel(context.cancellation) }
        while true {
            if context.cancellation.isCancelled { halt() }
            let (outcomes, running) = board.wait()
            for outcome in outcomes {
                switch outcome {
                case .done(let number, let etag, let sent):
                    bytes += sent
                    if var updated = self.state {
                        updated.record(.init(number: number, etag: etag))
                        save(updated)
                    }
                    if change == nil, let now = source.changeSinceClaim() {
                        change = now
                        halt()
                    }
                case .failed(_, let disposition, let response, let sent):
                    bytes += sent
                    if Self.outweighs(disposition, failure?.disposition) { failure = (disposition, response) }
                    // A retryable failure ends the attempt once the parts in flight are done (each
                    // one stored is recorded, so the next attempt sends only the rest); any other
                    // ends it now.
                    if disposition.isRetryLater { drain.cancel() } else { halt() }
                }
            }
            if !running && outcomes.isEmpty { break }
        }

        // Create or ListParts went out before any part: this upload has reached the store. A part
        // the store answered first (a 429 with its Retry-After) is the attempt's end, cancel or not.
        if context.cancellation.isCancelled, failure.map({ $0.disposition.isInterrupted }) ?? true {
            return (bytes, (.failure(.cancelled(bytesSent: bytes, connected: true)), .interrupted(connected: true)))
        }
        if let change { return (bytes, abandonForChange(change, bytes: bytes)) }
        guard let failure else { return (bytes, nil) }
        if case .permanent(let reason) = failure.disposition {
            abortAndForget(reason: reason)
        }
        let result: Result<UploadResponse, TransferFailure> = failure.response.map { .success(Self.withBytes($0, bytes)) }
            ?? .failure(.broken(Self.reason(failure.disposition), bytesSent: bytes))
        return (bytes, (result, failure.disposition))
    }

    // MARK: Complete

    private mutating func complete(bytesSent: Int64) -> S3Uploader.Outcome {
        guard let state else { preconditionFailure("complete without state") }
        let result = send(requests.completeMultipartUpload(context, uploadID: state.uploadID, parts: state.parts))
        let disposition = uploader.decide(result)
        switch disposition {
        case .sent(var response):
            let xml = S3XML(response.body)
            response.etag = xml?.first("ETag") ?? response.etag
            response.location = xml?.first("Location") ?? response.location
            response.bytesSent = bytesSent
            response.effectiveURL = requests.objectURL(context.key)
            save(nil)
            return (.success(response), .sent(response))
        case .permanent(let reason):
            var code = ""
            if case .success(let answer) = result { code = S3Error(status: answer.status, body: answer.body)?.code ?? "" }
            abortAndForget(reason: reason)
            // The store lost or rejected our parts: the next attempt starts a new upload.
            if ["NoSuchUpload", "InvalidPart", "InvalidPartOrder"].contains(code) {
                return (result, .retryLater(reason: reason + " (a new multipart upload is started on the next attempt)", retryAfter: nil))
            }
            return (result, disposition)
        default:
            return (result.map { Self.withBytes($0, bytesSent) }, disposition)
        }
    }

    // MARK: Helpers

    private mutating func abandonForChange(_ change: String, bytes: Int64) -> S3Uploader.Outcome {
        abortAndForget(reason: "file changed during upload (\(change))")
        let reason = "file changed during upload (\(change))"
        return (.failure(.broken(reason, bytesSent: bytes)), .retryLater(reason: reason, retryAfter: nil))
    }

    private mutating func abortAndForget(reason: String) {
        guard let state else { return }
        uploader.abort(state, context: context, transport: transport, reason: reason)
        save(nil)
    }

    static func partCount(size: Int64, partSize: Int64) -> Int { Int(max(1, (size + partSize - 1) / partSize)) }

    static func range(of number: Int, size: Int64, partSize: Int64) -> (offset: Int64, length: Int64) {
        let offset = Int64(number - 1) * partSize
        return (offset, max(0, min(partSize, size - offset)))
    }

    /// Whether a part's failure, rather than the one kept, is the attempt's: our own stop cuts
    /// the other parts short (the failure that caused it stays), one worse than "later"
    /// (permanent, refused, offline) outweighs a retryable one, and of two "later"s the one that
    /// asks to wait longer wins. A `Retry-After` is never dropped for a part that found the link
    /// gone or our credentials refused, whichever came first: no part comes back before the
    /// wait it was asked for (a permanent failure still ends the file).
    static func outweighs(_ new: Disposition, _ kept: Disposition?) -> Bool {
        guard let kept, !kept.isInterrupted else { return true }
        if case .retryLater(_, let newWait) = new, case .retryLater(_, let keptWait) = kept { return (newWait ?? 0) > (keptWait ?? 0) }
        if asksToWait(kept), offlineOrRefused(new) { return false }
        if asksToWait(new), offlineOrRefused(kept) { return true }
        return kept.isRetryLater && !new.isRetryLater && !new.isInterrupted
    }

    /// "Later", with a `Retry-After`.
    private static func asksToWait(_ disposition: Disposition) -> Bool {
        if case .retryLater(_, let wait?) = disposition { return wait > 0 }
        return false
    }

    private static func offlineOrRefused(_ disposition: Disposition) -> Bool {
        switch disposition {
        case .offline, .rejected: return true
        default: return false
        }
    }

    static func withBytes(_ response: UploadResponse, _ bytes: Int64) -> UploadResponse {
        var copy = response
        copy.bytesSent = bytes
        return copy
    }

    static func reason(_ disposition: Disposition) -> String {
        switch disposition {
        case .retryLater(let reason, _), .permanent(let reason), .offline(let reason), .rejected(let reason), .hostKeyMismatch(let reason):
            return reason
        case .sent: return "sent"
        case .interrupted: return "interrupted"
        }
    }
}

/// What each part thread runs: take a part, hash its range (unless `digest = none`), send it
/// once, post the outcome. A part is never tried again within the attempt: its failure ends it.
struct S3PartSender: Sendable {
    let uploader: S3Uploader
    let context: S3Requests.Context
    let uploadID: String
    let source: UploadSource
    let board: S3PartBoard
    /// Cancels the parts in flight.
    let stop: CancellationFlag
    /// Set when no further part may start; the parts in flight go on.
    let drain: CancellationFlag
    let progress: (@Sendable (Int64) -> Void)?

    func runThread() {
        let transport = uploader.threads.makeTransport()
        while let job = board.take(stopping: drain) {
            board.post(send(job, transport: transport))
        }
        board.threadFinished()
    }

    private func send(_ job: S3PartBoard.Job, transport: Transport) -> S3PartBoard.Outcome {
        var sha256: [UInt8]?
        if uploader.profile.digest == .sha256 {
            do {
                sha256 = try source.sha256(offset: job.offset, length: job.length, path: context.sourcePath ?? "")
            } catch {
                return .failed(number: job.number, .permanent(reason: "\(error)"), response: nil, bytes: 0)
            }
        }
        var c = context
        c.cancellation = stop
        var request = uploader.requests.uploadPart(c, uploadID: uploadID, number: job.number,
                                                   body: RequestBody([.file(fd: source.fd, offset: job.offset, length: job.length)]), sha256: sha256)
        let board = self.board, number = job.number, progress = self.progress
        request.progress = { sent in progress?(board.progress(part: number, sent: sent)) }
        let result = transport.send(request)
        let disposition = uploader.decide(result)
        let bytes: Int64
        switch result {
        case .success(let r): bytes = r.bytesSent
        case .failure(.broken(_, let b)), .failure(.cancelled(let b, _)): bytes = b
        case .failure: bytes = 0
        }
        if case .sent(let response) = disposition {
            board.endRequest(part: job.number, succeededWith: job.length)
            guard let etag = response.etag, !etag.isEmpty else {
                return .failed(number: job.number, .permanent(reason: "S3 UploadPart answered without an ETag"), response: response, bytes: bytes)
            }
            return .done(number: job.number, etag: etag, bytes: bytes)
        }
        board.endRequest(part: job.number, succeededWith: nil)
        let answer: UploadResponse? = if case .success(let answer) = result { answer } else { nil }
        return .failed(number: job.number, disposition, response: answer, bytes: bytes)
    }
}

private extension Disposition {
    var isRetryLater: Bool {
        if case .retryLater = self { return true }
        return false
    }
}
