import Foundation
import UploaderSupport
import UploaderConfig

/// Delivers one file to an S3-compatible store: a single PUT up to `multipart_threshold`,
/// a resumable multipart upload above it. Answers with the same result and `Disposition` a
/// plain transport send would, so the worker files the outcome away as for any destination.
///
/// Multipart: the upload id and each finished part are reported through `record` as they
/// complete, for the caller to keep durably (the manifest), so a crash or an offline spell
/// resumes with ListParts and sends only what is missing. A part is sent once per attempt: one
/// that fails retryably ends the attempt (after the parts in flight), and the next attempt, the
/// core's, resumes. A permanent failure, or a file that changed, aborts the upload (no orphaned parts).
package final class S3Uploader: Sendable {
    let profile: Profile
    let target: S3Target
    let requests: S3Requests
    let logger: Logger
    /// Signs requests and dates Retry-After.
    let clock: any Clock
    /// Where the part threads run and what they send on.
    let threads: DestinationThreads

    package init(profile: Profile, target: S3Target, logger: Logger, clock: any Clock, threads: DestinationThreads = DestinationThreads()) {
        self.threads = threads
        self.profile = profile
        self.target = target
        self.logger = logger
        self.clock = clock
        requests = S3Requests(profile: profile, target: target, clock: clock)
    }

    package typealias Outcome = UploadOutcome

    /// Uploads `source`; `request` (from `RequestBuilder`) lends its cancellation flag, rate limiter and progress callback.
    ///
    /// - Parameters:
    ///   - saved: the multipart progress last recorded for this file (nil for none).
    ///   - record: called on this thread, before the upload goes on, each time the progress
    ///     changes (nil: no multipart upload is open any more). The caller makes it durable:
    ///     when `upload` returns, its store holds the last value.
    package func upload(_ source: UploadSource, resuming saved: S3UploadState?, values: TemplateValues,
                        request: UploadRequest, transport: Transport,
                        record: @escaping (S3UploadState?) -> Void) -> Outcome {
        let context = S3Requests.Context(
            key: target.key(values), contentType: source.contentType,
            extraHeaders: profile.headers.map { ($0.name, $0.value.renderText(values)) },
            rateLimiter: request.rateLimiter, cancellation: request.cancellation, sourcePath: source.path.logSafe)
        if source.size <= target.multipartThreshold {
            return putObject(source, stale: saved, context: context, progress: request.progress, transport: transport, record: record)
        }
        var multipart = S3MultipartUpload(uploader: self, source: source, saved: saved, context: context,
                                          progress: request.progress, transport: transport, record: record)
        return multipart.run()
    }

    private func putObject(_ source: UploadSource, stale: S3UploadState?, context: S3Requests.Context,
                           progress: (@Sendable (Int64) -> Void)?, transport: Transport,
                           record: (S3UploadState?) -> Void) -> Outcome {
        if let stale {
            // Left from a multipart upload under another threshold: abort it, then send whole.
            abort(stale, context: context, transport: transport, reason: "file is now sent in one PUT")
            record(nil)
        }
        let sha256 = profile.digest == .sha256 ? source.sha256.flatMap { [UInt8](hex: $0) } : nil
        var request = requests.putObject(context, body: RequestBody([.file(fd: source.fd, offset: 0, length: source.size)]), sha256: sha256)
        request.progress = progress
        let result = transport.send(request)
        return (result, decide(result))
    }

    /// The disposition of one S3 answer (XML error codes first, then the HTTP status).
    func decide(_ result: Result<UploadResponse, TransferFailure>) -> Disposition {
        guard case .success(let response) = result else { return Disposition.decide(result, now: clock.now) }
        return S3Error.disposition(for: response, now: clock.now) ?? .sent(response)
    }

    /// AbortMultipartUpload, best effort (an upload the store no longer knows is fine).
    func abort(_ state: S3UploadState, context: S3Requests.Context, transport: Transport, reason: String) {
        var c = context
        c.key = Array(state.key.utf8)
        c.cancellation = CancellationFlag()
        let result = transport.send(requests.abortMultipartUpload(c, uploadID: state.uploadID))
        let problem: String?
        switch result {
        case .success(let response) where (200...299).contains(response.status) || response.status == 404: problem = nil
        case .success(let response):
            problem = S3Error(status: response.status, body: response.body)?.description ?? HTTPStatus.describe(response.status, text: response.statusText)
        case .failure(let failure): problem = "\(failure)"
        }
        if let problem {
            logger.warn("could not abort S3 multipart upload; the store keeps its parts until a lifecycle rule removes them",
                        ["profile": profile.name, "file": c.sourcePath ?? "", "upload_id": state.uploadID, "reason": reason, "error": problem])
        } else {
            logger.info("aborted S3 multipart upload", ["profile": profile.name, "file": c.sourcePath ?? "", "upload_id": state.uploadID, "reason": reason])
        }
    }
}
