import Foundation
import UploaderValues

/// Every file in retry/ the owner knows, with its one stage (`RetryStage`), and the earliest due
/// time kept at hand: the owner asks for it after every event, and a scan of every entry each time
/// would make a spool with many files in retry/ slow to the point of stalling (the scan happens
/// only when one is due).
package struct RetryFiles: Sendable, Equatable {
    package private(set) var entries: [RelativePath: RetryStage] = [:]
    /// The earliest due time of those held for retry, nil when none (one moving back is due again
    /// only once its move back has ended; one waiting for a claim, once that claim has ended).
    package private(set) var earliest: Date?
    /// How many are `movingBack`.
    package private(set) var movingBack = 0
    /// Due while a claim of a file under the same name runs: moved back only after that claim has
    /// ended (it may be finishing this very file's cut move into retry/), and left out of `earliest`
    /// until then.
    package private(set) var waitingForClaim: Set<RelativePath> = []

    package init() {}

    package func stage(of path: RelativePath) -> RetryStage? { entries[path] }

    /// `path` waits in retry/ until `due`; one moving back now is due again then, but not before
    /// the move back running has ended: two at once would race on the same names.
    package mutating func hold(_ path: RelativePath, due: Date) {
        let old = entries[path]
        let was: Date?
        switch old {
        case .movingBack?:
            entries[path] = .movingBack(dueAgain: due)
            return
        case .heldForRetry? where waitingForClaim.contains(path):
            entries[path] = .heldForRetry(due: due)
            return
        case .heldForRetry(let at)?:
            entries[path] = .heldForRetry(due: due)
            was = at
        case nil:
            verify(nil, .heldForRetry, path)
            entries[path] = .heldForRetry(due: due)
            was = nil
        }
        if let was, was == earliest, due > was {
            recomputeEarliest()
        } else {
            earliest = min(earliest ?? due, due)
        }
    }

    /// `path` is moving back to the outbox (`run --once` takes the retries due when it started this way).
    package mutating func moveBack(_ path: RelativePath) {
        let old = entries[path]
        if case .movingBack? = old { return }
        verify(old?.kind, .movingBack, path)
        entries[path] = .movingBack(dueAgain: nil)
        movingBack += 1
        waitingForClaim.remove(path)
        if old != nil { recomputeEarliest() }
    }

    /// Takes every file due at `now` to `movingBack`, earliest first (ties by path); one whose name
    /// a claim holds (`claimRuns`) waits for it instead (`claimEnded`).
    package mutating func takeDue(at now: Date, claimRuns: (RelativePath) -> Bool) -> [RelativePath] {
        guard let earliest, earliest <= now else { return [] }
        var due: [(at: Date, path: RelativePath)] = []
        for (path, stage) in entries where !waitingForClaim.contains(path) {
            switch stage {
            case .heldForRetry(let at) where at <= now:
                if claimRuns(path) { waitingForClaim.insert(path) } else { due.append((at, path)) }
            default: break
            }
        }
        due.sort { ($0.at, $0.path) < ($1.at, $1.path) }
        for item in due {
            verify(.heldForRetry, .movingBack, item.path)
            movingBack += 1
            entries[item.path] = .movingBack(dueAgain: nil)
        }
        recomputeEarliest()
        return due.map(\.path)
    }

    /// A claim of a file named `path` ended: a move back that waited for it is due again.
    package mutating func claimEnded(_ path: RelativePath) {
        guard waitingForClaim.remove(path) != nil, case .heldForRetry(let at)? = entries[path] else { return }
        earliest = min(earliest ?? at, at)
    }

    /// A move back of `path` ended (it is in the outbox now, or was not in retry/ any more).
    package mutating func movedBack(_ path: RelativePath) {
        guard case .movingBack(let again)? = entries[path] else { return }
        movingBack -= 1
        if let again {
            verify(.movingBack, .heldForRetry, path)
            entries[path] = .heldForRetry(due: again)
            earliest = min(earliest ?? again, again)
        } else {
            verify(.movingBack, nil, path)
            entries[path] = nil
        }
    }

    private mutating func recomputeEarliest() {
        earliest = nil
        for (path, stage) in entries where !waitingForClaim.contains(path) {
            switch stage {
            case .heldForRetry(let at): earliest = min(earliest ?? at, at)
            case .movingBack: break
            }
        }
    }

    /// Debug builds: a change not in `RetryStage.successors` is a bug, named with its file.
    private func verify(_ from: RetryStage.Kind?, _ to: RetryStage.Kind?, _ path: RelativePath) {
        #if DEBUG
        if from != to && !RetryStage.successors(of: from).contains(to) {
            preconditionFailure("invariant retryStageChangeAllowed broken for \(path): \(from.map(\.rawValue) ?? "none") → \(to.map(\.rawValue) ?? "none")")
        }
        #endif
    }
}
