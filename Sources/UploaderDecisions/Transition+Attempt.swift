import Foundation
import UploaderValues

/// After an upload job: what becomes of the file, what is counted and logged.
extension Transition {
    mutating func attempted(_ path: RelativePath, _ report: AttemptReport) {
        let wasTrial = state.files.stage(of: path)?.isTrial ?? false
        switch report.outcome {
        case .manifestUnwritable(let reason):
            // Nothing was sent. The file stays as it is and is tried again a little later.
            warnOnce(path, "cannot write manifest; file stays queued and is tried again later: \(reason)")
            effects.append(.release(path))
            _ = state.files.takeSeenAgain(path)
            if takingWork {
                state.files.delay(path, until: now.mono + policy.unwritableRetry)
            } else {
                state.files.remove(path)
            }
            return
        case .claimOutdated:
            effects.append(.release(path))
            _ = state.files.takeSeenAgain(path)
            if takingWork { state.files.enqueue(path) } else { state.files.remove(path) }
            return
        default:
            break
        }
        // The slot is free; the record says `uploading` until the settle rewrites it, unless the
        // job filing the file has already done so.
        state.files.move(path, to: .settling(recordOpen: !report.filing && report.outcome.wroteRecord, awaitingCredentials: false))
        noteCredentials(path, report, wasTrial: wasTrial)
        if report.filing, case .delivered(let status) = report.outcome {
            // Delivered unchanged, and the job is filing it as its plan said (`OnDelivered.fileInSent`);
            // its `.settled` follows, as a settle job's would.
            delivered(path, report, status: status)
            return
        }
        effects.append(.settle(path, settlement(for: path, report)))
    }

    private mutating func settlement(for path: RelativePath, _ report: AttemptReport) -> Settlement {
        let file = path.logSafe
        switch report.outcome {
        case .unreachable(let reason):
            if policy.mode == .once {
                close(leavingQueued: "destination unreachable; leaving files queued", reason)
            } else {
                goOffline(reason)
            }
            return .unreachable(reason: reason)
        case .rejected(let reason), .hostKeyMismatch(let reason):
            // Logged, and the file held, by `noteCredentials`.
            return .rejected(reason: reason)
        case .interrupted(let connected):
            log(.info, "upload interrupted; file stays queued", ["file": file, "id": report.id])
            return .interrupted(connected: connected)
        case .manifestUnwritable, .claimOutdated:
            preconditionFailure("handled by attempted(_:_:)")
        case .notAttempted(let reason):
            state.totals.failed += 1
            logFiled(path, failed: true, reason: reason, attempts: report.countedAttempts, next: nil, id: report.id)
            return .failedWithoutAttempt(reason: reason)
        case .delivered, .retryable, .permanent:
            break
        }
        if let change = report.changed {
            log(.info, "file changed during upload; uploading it again", ["file": file, "change": change])
            return .changed(change)
        }
        switch report.outcome {
        case .delivered(let status):
            delivered(path, report, status: status)
            return .sent(at: now.wall)
        case .retryable(let reason, let retryAfter):
            if report.countedAttempts >= policy.maxAttempts {
                let final = "\(reason) (gave up after \(report.countedAttempts) attempts)"
                state.totals.failed += 1
                logFiled(path, failed: true, reason: final, attempts: report.countedAttempts, next: nil, id: report.id)
                return .failed(reason: final, retryable: true)
            }
            var random = state.random
            let delay = Backoff.delay(forAttempt: report.countedAttempts, base: policy.backoff, max: policy.maxBackoff,
                                      retryAfter: retryAfter, random: { Double.random(in: $0, using: &random) })
            state.random = random
            let due = now.wall.addingTimeInterval(delay)
            state.totals.retried += 1
            logFiled(path, failed: false, reason: reason, attempts: report.countedAttempts, next: due, id: report.id)
            return .retry(reason: reason, due: due)
        case .permanent(let reason):
            state.totals.failed += 1
            logFiled(path, failed: true, reason: reason, attempts: report.countedAttempts, next: nil, id: report.id)
            return .failed(reason: reason, retryable: false)
        case .unreachable, .rejected, .hostKeyMismatch, .interrupted, .manifestUnwritable, .notAttempted, .claimOutdated:
            preconditionFailure("handled above")
        }
    }

    /// A file delivered unchanged: counted and logged as sent.
    private mutating func delivered(_ path: RelativePath, _ report: AttemptReport, status: Int) {
        state.totals.recordSent(bytes: report.size, seconds: report.seconds)
        log(.info, "sent", ["file": path.logSafe, "id": report.id, "bytes": String(report.size),
                            "duration_s": LogNumbers.fixed(report.seconds, places: 3),
                            "rate": LogNumbers.rate(report.size, report.seconds), "http_status": String(status)])
    }

    /// `run --once` met an unreachable destination (or a route by a foreign interface, or refused
    /// credentials): it starts nothing more and leaves the rest queued.
    mutating func close(leavingQueued message: String, _ reason: String, level: LogLevel = .warn) {
        guard !state.closed else { return }
        state.closed = true
        state.totals.leftQueuedOffline = true
        state.lastProblem = reason
        log(level, message, ["error": reason])
        state.files.removeAllWaiting()
        for path in state.files.ready {
            effects.append(.release(path))
            state.files.remove(path)
        }
    }
}
