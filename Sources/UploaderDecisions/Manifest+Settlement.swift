import Foundation
import UploaderValues

/// How each `Settlement` edits a manifest: the record written before the file is moved
/// (or left queued). Pure, so the record of every outcome is tested without a spool.
extension Manifest {
    /// What the request that just ended did, as the attempt records it.
    package struct AttemptFacts: Sendable, Equatable {
        package var bytesSent: Int64
        package var httpStatus: Int?

        package init(bytesSent: Int64, httpStatus: Int?) {
            self.bytesSent = bytesSent
            self.httpStatus = httpStatus
        }
    }

    /// Applies `settlement`; returns where the file goes next (nil: it stays queued in the outbox).
    package mutating func settle(_ settlement: Settlement, facts: AttemptFacts, now: Date) -> SpoolArea? {
        switch settlement {
        case .sent(let at):
            endAttempt(facts, at: now, error: nil, retryable: nil)
            state = .sent
            sentAt = Timestamp.format(at)
            lastError = nil
            return .sent
        case .retry(let reason, let due):
            endAttempt(facts, at: now, error: reason, retryable: true)
            state = .retry
            nextAttemptAt = Timestamp.format(due)
            lastError = reason
            return .retry
        case .failed(let reason, let retryable):
            endAttempt(facts, at: now, error: reason, retryable: retryable)
            state = .failed
            lastError = reason
            return .retry
        case .failedWithoutAttempt(let reason):
            dropOpenAttempt()
            state = .failed
            lastError = reason
            return .retry
        case .changed(let change):
            endAttempt(facts, at: now, error: "file changed during upload (\(change)); uploading again", retryable: true)
            // Its producer cut it, not the destination: it does not count toward `max_attempts`.
            if let index = attempts.indices.last { attempts[index].interrupted = true }
            state = .queued
            lastError = "file changed during upload (\(change))"
            return nil
        case .rejected(let reason):
            endAttempt(facts, at: now, error: reason, retryable: true)
            if let index = attempts.indices.last { attempts[index].rejected = true }
            state = .queued
            lastError = reason
            return nil
        case .unreachable(let reason):
            // A connect that failed is no attempt at all.
            dropOpenAttempt()
            state = .queued
            lastError = reason
            return nil
        case .interrupted(let connected):
            if connected {
                closeOpenAttempt(at: now, interrupted: true)
            } else {
                dropOpenAttempt()
            }
            state = .queued
            return nil
        }
    }

    /// Fills in the open attempt's end.
    private mutating func endAttempt(_ facts: AttemptFacts, at now: Date, error: String?, retryable: Bool?) {
        guard let index = attempts.indices.last, attempts[index].endedAt == nil else { return }
        attempts[index].endedAt = Timestamp.format(now)
        attempts[index].bytesSent = facts.bytesSent
        attempts[index].httpStatus = facts.httpStatus
        attempts[index].error = error
        attempts[index].retryable = retryable
    }

    /// Removes the attempt recorded for a request that never reached the destination.
    package mutating func dropOpenAttempt() {
        if let last = attempts.last, last.endedAt == nil { attempts.removeLast() }
    }
}
