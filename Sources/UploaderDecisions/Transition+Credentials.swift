import UploaderValues

extension ProfileState {
    /// Whether the destination takes our credentials (DESIGN §12 "Rejected"). As with
    /// reachability, the pause is read off this one value (`mayStart`, `pausedReason`), so a
    /// revoked token pauses the profile instead of failing its backlog file by file.
    package enum Credentials: Sendable, Equatable {
        /// Nothing refused since the last delivery, the start, or a credentials change.
        case accepted
        /// Refused on the files in `FileStages.awaitingCredentials` (fewer than `Transition.rejectAfter`,
        /// in a row, no delivery since); `last` is the last refusal.
        case doubted(last: String)
        /// Paused: refused on `rejectAfter` distinct files in a row, or on every file there was to
        /// try. `trials` files were tried since; the next one may start at `nextTrial` (monotonic).
        case rejected(since: Double, last: String, trials: Int, nextTrial: Double)

        package var isRejected: Bool {
            if case .rejected = self { return true } else { return false }
        }

        /// The last refusal (`HTTP 401 Unauthorized`, `S3 ExpiredToken (HTTP 400): …`), nil when accepted.
        package var lastRefusal: String? {
            switch self {
            case .accepted: nil
            case .doubted(let last), .rejected(_, let last, _, _): last
            }
        }
    }
}

/// Refused credentials: a refusal is never the file's fault, so the file stays queued (its
/// attempt kept, not counted) and waits, with the others refused, until the doubt is settled — a
/// delivery brings them all back at once; `rejectAfter` distinct files refused in a row, or no
/// other file left to try, pause the profile. Paused, one file is tried after `backoff`, doubling
/// up to `max_backoff`, or at once when the credentials may have changed; the first delivery resumes.
extension Transition {
    /// Distinct files refused in a row, with no delivery between, that pause the profile.
    static let rejectAfter = 3

    /// An upload ended: what it says about our credentials (the file is being settled; it was the
    /// trial if `wasTrial`).
    mutating func noteCredentials(_ path: RelativePath, _ report: AttemptReport, wasTrial: Bool) {
        switch report.outcome {
        case .delivered:
            credentialsAccepted()
        case .rejected(let reason):
            state.hostKeyRefused = false
            credentialsRefused(path, reason, id: report.id, wasTrial: wasTrial)
        case .hostKeyMismatch(let reason):
            hostKeyRefused(path, reason, id: report.id, wasTrial: wasTrial)
        default:
            // The trial ended with no word on our credentials (5xx, 400, the file changed, …): the
            // next file may be tried at once (its `nextTrial` has passed).
            break
        }
    }

    private mutating func credentialsRefused(_ path: RelativePath, _ reason: String, id: String, wasTrial: Bool) {
        state.files.markAwaitingCredentials(path)
        switch state.credentials {
        case .accepted, .doubted:
            state.credentials = .doubted(last: reason)
            log(.warn, "destination refused our credentials; file stays queued",
                ["file": path.logSafe, "id": id, "refused_in_a_row": String(state.files.awaitingCredentials.count), "error": reason])
            if state.files.awaitingCredentials.count >= Self.rejectAfter { reject(reason) }
        case .rejected(let since, _, let trials, let next):
            guard wasTrial else {
                // An upload in flight when the pause began: it waits like the others.
                state.credentials = .rejected(since: since, last: reason, trials: trials, nextTrial: next)
                log(.info, "destination refused our credentials; file stays queued", ["file": path.logSafe, "id": id, "error": reason])
                return
            }
            let delay = trialDelay(after: trials + 1)
            state.credentials = .rejected(since: since, last: reason, trials: trials + 1, nextTrial: now.mono + delay)
            log(.info, "credentials still refused; profile stays paused",
                ["file": path.logSafe, "error": reason, "next_try_in_s": LogNumbers.fixed(delay, places: 0)])
        }
    }

    /// The server's host key did not match: unlike a refusal of our credentials, one is enough to
    /// pause (no other file could meet another key), with one error line giving both fingerprints.
    private mutating func hostKeyRefused(_ path: RelativePath, _ reason: String, id: String, wasTrial: Bool) {
        state.files.markAwaitingCredentials(path)
        if case .rejected(let since, _, let trials, let next) = state.credentials, state.hostKeyRefused {
            let next = wasTrial ? now.mono + trialDelay(after: trials + 1) : next
            state.credentials = .rejected(since: since, last: reason, trials: wasTrial ? trials + 1 : trials, nextTrial: next)
            log(.info, "server's host key still does not match; profile stays paused", ["file": path.logSafe, "error": reason])
            return
        }
        state.hostKeyRefused = true
        let delay = trialDelay(after: 0)
        state.credentials = .rejected(since: now.mono, last: reason, trials: 0, nextTrial: now.mono + delay)
        if policy.mode == .once {
            close(leavingQueued: "server's host key does not match; leaving files queued (check known_hosts or host_key_sha256)",
                  reason, level: .error)
            return
        }
        log(.error, "server's host key does not match; profile paused, files stay queued",
            ["error": reason, "next_try_in_s": LogNumbers.fixed(delay, places: 0)])
        releaseReady()
    }

    /// Pauses the profile (`run --once`: starts nothing more and leaves the rest queued, exit 69).
    private mutating func reject(_ reason: String) {
        let files = state.files.awaitingCredentials.count
        let delay = trialDelay(after: 0)
        state.credentials = .rejected(since: now.mono, last: reason, trials: 0, nextTrial: now.mono + delay)
        if policy.mode == .once {
            close(leavingQueued: "destination refuses our credentials; leaving files queued (fix the credentials and run again)",
                  reason, level: .error)
            return
        }
        log(.warn, "destination refuses our credentials; profile paused, files stay queued",
            ["refused_files": String(files), "error": reason, "next_try_in_s": LogNumbers.fixed(delay, places: 0)])
        releaseReady()
    }

    /// Before the `trials + 1`-th trial: `backoff` doubling up to `max_backoff`. No jitter: one
    /// sequence per profile, nothing to spread.
    private func trialDelay(after trials: Int) -> Double {
        Backoff.delay(forAttempt: trials + 1, base: policy.backoff, max: policy.maxBackoff, random: { $0.upperBound })
    }

    private mutating func credentialsAccepted() {
        switch state.credentials {
        case .accepted:
            return
        case .doubted:
            state.credentials = .accepted
            log(.info, "destination accepts our credentials; refused files queued again",
                ["files": String(state.files.awaitingCredentials.count)])
        case .rejected(let since, _, _, _):
            state.credentials = .accepted
            state.hostKeyRefused = false
            log(.info, "destination accepts our credentials again; resuming",
                ["paused_seconds": LogNumbers.fixed(now.mono - since, places: 1)])
        }
        releaseAwaiting()
    }

    /// SIGHUP, or a credentials file changed: a doubt is dropped, a paused profile tries a file now.
    mutating func credentialsChanged() {
        guard state.phase == .running else { return }
        switch state.credentials {
        case .accepted:
            return
        case .doubted:
            state.credentials = .accepted
            releaseAwaiting()
        case .rejected(let since, let last, _, _):
            state.credentials = .rejected(since: since, last: last, trials: 0, nextTrial: now.mono)
            log(.info, "credentials may have changed; trying a file now")
        }
    }

    /// With a doubt and no other file left to try, waiting for a delivery would wait for ever (or
    /// try the same files in a loop): the profile pauses with the refusals it has.
    mutating func settleDoubt() {
        guard case .doubted(let last) = state.credentials, takingWork else { return }
        let nothingElse = state.files.waiting.isEmpty && state.files.ready.isEmpty && state.files.claimsAhead.isEmpty
            && state.files.slots.isEmpty && state.retries.movingBack == 0 && state.files.delayed.isEmpty
        if nothingElse { reject(last) }
    }

    /// Paused for our credentials: one file at a time, once `nextTrial` has come and nothing else
    /// runs (so no trial either: it holds a slot). Waiting files go first; when none is left, the
    /// refused ones wait in line again.
    mutating func startTrial() {
        guard case .rejected(_, _, _, let at) = state.credentials, now.mono >= at,
              state.files.slots.isEmpty, recordFree, state.mayTry(policy) else { return }
        if state.files.waiting.isEmpty && state.files.ready.isEmpty { releaseAwaiting() }
        if let (path, since) = state.files.sendFirstReady(trial: true) {
            effects.append(.upload(path, uploadPlan(readySince: since)))
        } else if let path = state.files.claimNext(inSlot: true, trial: true) {
            effects.append(.claimAndUpload(path, uploadPlan(readySince: nil)))
        }
    }

    /// The refused files wait in line again (those still being settled join it when they are).
    /// One the watcher saw again meanwhile needs no second look: it is in line.
    mutating func releaseAwaiting() {
        for path in state.files.awaitingCredentials.sorted() {
            switch state.files.stage(of: path) {
            case .settling(let recordOpen, _)?:
                state.files.move(path, to: .settling(recordOpen: recordOpen, awaitingCredentials: false))
            default:
                _ = state.files.takeSeenAgain(path)
                if takingWork { state.files.enqueue(path) } else { state.files.remove(path) }
            }
        }
    }
}
