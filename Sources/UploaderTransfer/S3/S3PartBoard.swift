import Foundation
import UploaderSupport
import UploaderConfig

/// The meeting point of a multipart upload's coordinator and its part threads: the parts still
/// to send, and the results coming back. Small and locked; the threads never touch the manifest.
final class S3PartBoard: @unchecked Sendable {
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

    private let condition = NSCondition()
    private var jobs: [Job]
    private var outcomes: [Outcome] = []
    private var running = 0
    private var sentByPart: [Int: Int64] = [:]

    init(jobs: [Job]) { self.jobs = jobs }

    /// The next part to send, or nil when none is left (or the upload is being stopped).
    func take(stopping: CancellationFlag) -> Job? {
        condition.lock(); defer { condition.unlock() }
        guard !stopping.isCancelled, !jobs.isEmpty else { return nil }
        return jobs.removeFirst()
    }

    func threadStarted() {
        condition.lock(); running += 1; condition.unlock()
    }

    func threadFinished() {
        condition.lock(); running -= 1; condition.broadcast(); condition.unlock()
    }

    func post(_ outcome: Outcome) {
        condition.lock(); outcomes.append(outcome); condition.broadcast(); condition.unlock()
    }

    private var completedBytes: Int64 = 0

    /// Records a part's bytes in flight; returns all bytes sent in this upload so far (for progress).
    func progress(part: Int, sent: Int64) -> Int64 {
        condition.lock(); defer { condition.unlock() }
        sentByPart[part] = sent
        return completedBytes + sentByPart.values.reduce(0, +)
    }

    /// A part's request ended: its bytes count as sent only if it succeeded.
    func endRequest(part: Int, succeededWith length: Int64?) {
        condition.lock()
        sentByPart[part] = nil
        completedBytes += length ?? 0
        condition.unlock()
    }

    /// Waits up to `timeout` for outcomes; returns those that arrived and whether threads still run.
    func wait(timeout: TimeInterval) -> (outcomes: [Outcome], running: Bool) {
        condition.lock(); defer { condition.unlock() }
        if outcomes.isEmpty && running > 0 { _ = condition.wait(until: Date().addingTimeInterval(timeout)) }
        let taken = outcomes
        outcomes = []
        return (taken, running > 0)
    }
}
