import Foundation
import Synchronization
import UploaderSupport

/// Claims ahead waiting for a claimer: a few workers (the claimers) take them in batches, each
/// batch's attempt records written and then fsynced together (`FileLifecycle.prepareAttempts`),
/// so that on a small pool the records still share journal commits as one claim per thread did.
final class ClaimLine: Sendable {
    /// A claim ahead: the path and the file held for it.
    struct Claim: Sendable {
        let path: RelativePath
        let file: HeldFile
    }

    /// How many claimers may be out at once: hashes of big files run side by side, and while one
    /// batch waits on its fsyncs the next gathers.
    static let claimers = 2
    /// A batch ends at this many claims, or once it has hashed `batchBytes`: a record waits for
    /// the batch's last claim before it is fsynced and reported, so a batch of big files is one.
    static let batchClaims = 16
    static let batchBytes: Int64 = 1 << 20

    private struct Line: Sendable {
        var waiting: [Claim] = []
        var next = 0
        var claimersOut = 0
    }

    private let line = Mutex(Line())

    /// Adds `claim`; true when the caller must post a claimer (fewer than `claimers` are out).
    func add(_ claim: Claim) -> Bool {
        line.withLock { line in
            line.waiting.append(claim)
            guard line.claimersOut < Self.claimers else { return false }
            line.claimersOut += 1
            return true
        }
    }

    /// For a claimer: the claim waiting longest, nil when none waits.
    func next() -> Claim? {
        line.withLock { line in
            guard line.next < line.waiting.count else { return nil }
            defer {
                line.next += 1
                if line.next == line.waiting.count { (line.waiting, line.next) = ([], 0) }
            }
            return line.waiting[line.next]
        }
    }

    /// For a claimer between batches: true (and the claimer is no longer out) when nothing waits,
    /// so that the next `add` posts another.
    func leaveIfEmpty() -> Bool {
        line.withLock { line in
            guard line.next == line.waiting.count else { return false }
            line.claimersOut -= 1
            return true
        }
    }
}
