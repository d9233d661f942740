import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig

/// The meeting point of a multipart upload's coordinator and its part threads: the parts still
/// to send, and the results coming back. Small and locked; the threads never touch the manifest.
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
    }

    private let parts: Mutex<Parts>
    /// Signalled when an outcome arrives, a part thread ends or the upload is cancelled
    /// (`wakeOnCancel`): the coordinator's wake-up.
    private let news = DispatchSemaphore(value: 0)

    init(jobs: [Job]) { parts = Mutex(Parts(jobs: jobs)) }

    /// The next part to send, or nil when none is left (or the upload is being stopped).
    func take(stopping: CancellationFlag) -> Job? {
        parts.withLock { parts in
            guard !stopping.isCancelled, !parts.jobs.isEmpty else { return nil }
            return parts.jobs.removeFirst()
        }
    }

    func threadStarted() {
        parts.withLock { $0.running += 1 }
    }

    func threadFinished() {
        parts.withLock { $0.running -= 1 }
        news.signal()
    }

    func post(_ outcome: Outcome) {
        parts.withLock { $0.outcomes.append(outcome) }
        news.signal()
    }

    /// Records a part's bytes in flight; returns all bytes sent in this upload so far (for progress).
    func progress(part: Int, sent: Int64) -> Int64 {
        parts.withLock { parts in
            parts.sentByPart[part] = sent
            return parts.completedBytes + parts.sentByPart.values.reduce(0, +)
        }
    }

    /// A part's request ended: its bytes count as sent only if it succeeded.
    func endRequest(part: Int, succeededWith length: Int64?) {
        parts.withLock { parts in
            parts.sentByPart[part] = nil
            parts.completedBytes += length ?? 0
        }
    }

    /// Wakes the coordinator when `flag` is set, so its wait ends at a cancel as at any news.
    /// False when the flag is set already.
    func wakeOnCancel(_ flag: CancellationFlag) -> Bool { flag.latch.notify(news) }

    /// Stops waking the coordinator for `flag` (the upload's parts are over).
    func forgetCancel(_ flag: CancellationFlag) { flag.latch.forget(news) }

    /// Waits for outcomes (or a cancel, with `wakeOnCancel`); returns those that arrived and
    /// whether threads still run. A wake-up left over from news already taken only makes the
    /// caller look once more.
    func wait() -> (outcomes: [Outcome], running: Bool) {
        let nothingYet = parts.withLock { $0.outcomes.isEmpty && $0.running > 0 }
        if nothingYet { news.wait() }
        return parts.withLock { parts in
            defer { parts.outcomes = [] }
            return (parts.outcomes, parts.running > 0)
        }
    }
}
