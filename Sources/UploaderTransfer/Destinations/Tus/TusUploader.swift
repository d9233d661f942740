import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig

/// Delivers one file with the tus 1.0 resumable protocol (DESIGN §10) and answers with the same
/// result and `Disposition` a plain transport send would, so the worker files the outcome away
/// as for any destination.
///
/// The upload URL and the server's offset are reported through `record` as they change, for the
/// caller to keep durably (the manifest), so a later run resumes with a HEAD and never sends
/// bytes the server already holds. One call is one run of the sequence (OPTIONS, HEAD or POST,
/// PATCHes, DELETE): one attempt, whichever of its requests ends it.
package final class TusUploader: Sendable {
    let profile: Profile
    let requests: TusRequests
    let logger: Logger
    /// Dates a Retry-After the server sends.
    let clock: any Clock
    /// Whether the server behind each creation URL offers `sha256` checksums, asked once with OPTIONS.
    private let checksumOffers = Mutex<[String: Bool]>([:])

    package init(profile: Profile, logger: Logger, clock: any Clock) {
        self.profile = profile
        self.logger = logger
        self.clock = clock
        requests = TusRequests(profile: profile)
    }

    /// Uploads `source` to the creation endpoint `request.url` (from `RequestBuilder`), which also
    /// lends its cancellation flag, rate limiter and progress callback.
    ///
    /// - Parameters:
    ///   - saved: the upload last recorded for this file (nil for none).
    ///   - record: called on this thread, before the upload goes on, each time the upload's
    ///     record changes (nil: no upload is open any more). The caller makes it durable.
    package func upload(_ source: UploadSource, resuming saved: TusUploadState?, values: TemplateValues,
                        request: UploadRequest, transport: Transport, record: @escaping (TusUploadState?) -> Void) -> UploadOutcome {
        let context = TusRequests.Context(
            creationURL: request.url, profileHeaders: RequestBuilder(profile: profile).withProfileHeaders([], values: values),
            rateLimiter: request.rateLimiter, cancellation: request.cancellation, sourcePath: source.path.logSafe)
        var upload = TusUpload(uploader: self, source: source, saved: saved, context: context, progress: request.progress,
                               transport: transport, record: record)
        return upload.run()
    }

    /// Whether PATCHes may carry `Upload-Checksum: sha256 …` (tus checksum extension). Asked once
    /// per creation URL; a failed OPTIONS means no checksum this time and asks again next time.
    func offersChecksum(_ c: TusRequests.Context, transport: Transport) -> Bool {
        guard profile.digest == .sha256 else { return false }
        if let known = checksumOffers.withLock({ $0[c.creationURL] }) { return known }
        guard case .success(let answer) = transport.send(requests.options(c)) else { return false }
        let offered = Self.offersSHA256(answer)
        checksumOffers.withLock { $0[c.creationURL] = offered }
        return offered
    }

    static func offersSHA256(_ answer: UploadResponse) -> Bool {
        func list(_ name: String) -> [String] {
            (answer.headers[name] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        }
        return (200...299).contains(answer.status) && list("tus-extension").contains("checksum")
            && list("tus-checksum-algorithm").contains("sha256")
    }

    /// DELETE of an upload (termination), best effort: one the server no longer has is gone already.
    func terminate(_ state: TusUploadState, context: TusRequests.Context, transport: Transport, reason: String) {
        var c = context
        c.cancellation = CancellationFlag()
        let result = transport.send(requests.terminate(c, url: state.uploadURL))
        let fields = [("profile", profile.name), ("file", c.sourcePath ?? ""), ("upload_url", state.uploadURL), ("reason", reason)]
        let problem: String?
        switch result {
        case .success(let answer) where (200...299).contains(answer.status) || [404, 410].contains(answer.status): problem = nil
        case .success(let answer): problem = HTTPStatus.describe(answer.status, text: answer.statusText)
        case .failure(let failure): problem = "\(failure)"
        }
        if let problem {
            logger.log(.warn, "could not terminate tus upload; the server keeps it until it expires", pairs: fields + [("error", problem)])
        } else {
            logger.log(.info, "terminated tus upload", pairs: fields)
        }
    }
}
