import Foundation
import UploaderSupport
import UploaderConfig

/// The meeting point of a multipart upload's coordinator and its part threads: the parts still
/// to send, and the results coming back, on a `Monitor` (the one way threads wait here). The
/// threads never touch the manifest.
final class S3PartBoard: Sendable {
    /// One part's byte range of the file.
    struct Job: Sendable {
        var number: Int
        var offset: Int64
        var length: Int64
    }

    enum Outcome: Sendable {
        case done(number: Int, etag: String, bytes: Int64)
        case failed(number: Int, Disposition, response: UploadResponse?, bytes: Int64)
    }

    /// Everything the coordinator and the part threads share.
    private struct Parts {
        var jobs: [Job]
        var outcomes: [Outcome] = []
        var running = 0
        var sentByPart: [Int: Int64] = [:]
        var completedBytes: Int64 = 0
        /// The upload was cancelled since the coordinator last looked (`wakeOnCancel`).
        var cancelNews = false
    }

    /// A cancel, seen by the coordinator as news on the board: the latch signals this, and the
    /// signal is an update, so the coordinator's wait (a condition on the board) ends at it.
    /// Never waited on itself.
    private final class CancelAsNews: WakeUp {
        let parts: Monitor<Parts>
        init(_ parts: Monitor<Parts>) { self.parts = parts }
        func wait() {}
        func wait(until deadline: DispatchTime) -> Bool { false }
        func signal() { parts.update { $0.cancelNews = true } }
    }

    private let parts: Monitor<Parts>
    private let cancelAsNews: CancelAsNews

    init(jobs: [Job], scheduler: any Scheduler = .system) {
        parts = Monitor(Parts(jobs: jobs), scheduler: scheduler)
        cancelAsNews = CancelAsNews(parts)
    }

    /// The next part to send, or nil when none is left (or the upload is being stopped).
    func take(stopping: CancellationFlag) -> Job? {
        parts.update { parts in
            guard !stopping.isCancelled, !parts.jobs.isEmpty else { return nil }
            return parts.jobs.removeFirst()
        }
    }

    func threadStarted() {
        parts.update { $0.running += 1 }
    }

    func threadFinished() {
        parts.update { $0.running -= 1 }
    }

    func post(_ outcome: Outcome) {
        parts.update { $0.outcomes.append(outcome) }
    }

    /// Records a part's bytes in flight; returns all bytes sent in this upload so far (for progress).
    func progress(part: Int, sent: Int64) -> Int64 {
        parts.update { parts in
            parts.sentByPart[part] = sent
            return parts.completedBytes + parts.sentByPart.values.reduce(0, +)
        }
    }

    /// A part's request ended: its bytes count as sent only if it succeeded.
    func endRequest(part: Int, succeededWith length: Int64?) {
        parts.update { parts in
            parts.sentByPart[part] = nil
            parts.completedBytes += length ?? 0
        }
    }

    /// Wakes the coordinator when `flag` is set, so its wait ends at a cancel as at any news.
    /// False when the flag is set already.
    func wakeOnCancel(_ flag: CancellationFlag) -> Bool { flag.latch.notify(cancelAsNews) }

    /// Stops waking the coordinator for `flag` (the upload's parts are over).
    func forgetCancel(_ flag: CancellationFlag) { flag.latch.forget(cancelAsNews) }

    /// Waits for outcomes, the end of the part threads or a cancel (with `wakeOnCancel`); returns
    /// the outcomes that arrived and whether threads still run.
    func wait() -> (outcomes: [Outcome], running: Bool) {
        parts.wait { parts in
            guard !parts.outcomes.isEmpty || parts.running == 0 || parts.cancelNews else { return nil }
            defer {
                parts.outcomes = []
                parts.cancelNews = false
            }
            return (parts.outcomes, parts.running > 0)
        }
    }
}
