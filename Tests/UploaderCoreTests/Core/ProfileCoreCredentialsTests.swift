import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// Refused credentials (DESIGN §12 "Rejected"): a revoked token pauses the profile after three
/// distinct files, fails none of them, tries one file at a time on a doubling backoff, and the
/// first delivery resumes everything.
@Suite("Credentials the destination refuses pause the profile, never fail a file")
struct ProfileCoreCredentialsTests {
    static let refused = AttemptOutcome.rejected(reason: "HTTP 401 Unauthorized")
    static let pauseLine = "destination refuses our credentials; profile paused, files stay queued"

    static func names(_ count: Int) -> [String] { (0..<count).map { "f\($0)" } }

    /// Files whose upload the effects start: a slot for a claimed file, or a claim and upload in one job.
    static func started(_ effects: [ProfileEffect]) -> [RelativePath] { effects.uploads + effects.claimsInSlots }

    /// The destination answers `outcome` to the upload of `path`, and the runner settles it as the
    /// core asked; claims asked for meanwhile are answered ready. Returns every effect of those steps.
    @discardableResult
    static func answer(_ p: inout EmbeddedProfile, _ path: RelativePath, _ outcome: AttemptOutcome) -> [ProfileEffect] {
        var effects: [ProfileEffect] = []
        if p.state.files.claims.contains(path) { effects += p.send(.claimed(path, .ready)) }
        effects += p.send(.attempted(path, .outcome(outcome)))
        for case .settle(let settled, let settlement) in effects where settled == path {
            switch settlement {
            case .sent: effects += p.send(.settled(path, .filed(.sent, path, retryDue: nil)))
            case .failed, .failedWithoutAttempt: effects += p.send(.settled(path, .filed(.retry, path, retryDue: nil)))
            default: effects += p.send(.settled(path, .requeued))
            }
        }
        return effects + p.claimAll(effects)
    }

    /// A daemon with `count` files, the first uploads under way.
    static func running(_ count: Int, concurrency: Int = 2, backoff: TimeInterval = 30, maxBackoff: TimeInterval = 3600)
        -> (EmbeddedProfile, [RelativePath]) {
        var p = EmbeddedProfile.daemon(concurrency: concurrency, backoff: backoff, maxBackoff: maxBackoff)
        let first = p.recover(names(count))
        return (p, started(first))
    }

    /// Refuses whatever is in flight, one by one, until the profile pauses.
    static func refuseUntilPaused(_ p: inout EmbeddedProfile, _ inFlight: [RelativePath]) -> [ProfileEffect] {
        var queue = inFlight
        var effects: [ProfileEffect] = []
        while p.state.pausedReason == nil, !queue.isEmpty {
            let step = answer(&p, queue.removeFirst(), refused)
            effects += step
            queue += started(step)
        }
        return effects
    }

    @Test func threeDistinctRefusalsInARowPauseTheProfileAndFailNoFile() {
        var (p, inFlight) = Self.running(10)
        #expect(inFlight.count == 2)
        var effects = Self.answer(&p, inFlight[0], Self.refused)
        #expect(p.state.pausedReason == nil, "one refusal is no verdict")
        #expect(p.state.files.stage(of: inFlight[0]) == .awaitingCredentials, "the refused file waits apart, not in line")
        effects += Self.answer(&p, inFlight[1], Self.refused)
        #expect(p.state.pausedReason == nil)
        let third = Self.started(effects).first { !inFlight.contains($0) }!
        let pausing = Self.answer(&p, third, Self.refused)
        effects += pausing
        #expect(p.state.pausedReason == .rejected)
        #expect(effects.logged(Self.pauseLine).count == 1)
        #expect(effects.settlements.allSatisfy { $0 == .rejected(reason: "HTTP 401 Unauthorized") }, "\(effects.settlements)")
        #expect(p.state.totals.failed == 0 && p.state.totals.retried == 0)
        #expect(p.state.files.awaitingCredentials.count == 3)
        // Nothing new starts; the one still in flight is refused too and waits like the others.
        #expect(Self.started(pausing).isEmpty)
        for path in p.state.files.slots.sorted() {
            let late = Self.answer(&p, path, Self.refused)
            #expect(Self.started(late).isEmpty && late.logged(Self.pauseLine).isEmpty)
        }
        #expect(p.state.files.slots.isEmpty && p.state.files.claims.isEmpty)
    }

    @Test func aDeliveryBetweenRefusalsStartsTheCountAgain() {
        var (p, inFlight) = Self.running(10, concurrency: 1)
        var next = Self.started(Self.answer(&p, inFlight[0], Self.refused))
        next = Self.started(Self.answer(&p, next[0], Self.refused))
        #expect(p.state.files.awaitingCredentials.count == 2)
        let delivered = Self.answer(&p, next[0], .delivered(status: 201))
        #expect(p.state.files.awaitingCredentials.isEmpty, "a delivery puts the refused files back in line")
        #expect(delivered.claims.contains(inFlight[0]), "claimed again")
        next = Self.started(delivered)
        next = Self.started(Self.answer(&p, next[0], Self.refused))
        next = Self.started(Self.answer(&p, next[0], Self.refused))
        #expect(p.state.pausedReason == nil, "two in a row since the delivery")
        Self.answer(&p, next[0], Self.refused)
        #expect(p.state.pausedReason == .rejected)
    }

    @Test func aStatusAboutOneFileFailsOnlyThatFile() {
        var (p, inFlight) = Self.running(10)
        Self.answer(&p, inFlight[0], Self.refused)
        for (index, reason) in ["HTTP 400 Bad Request", "HTTP 413 Content Too Large", "HTTP 422 Unprocessable Content"].enumerated() {
            let path = p.state.files.slots.sorted().first!
            let failed = Self.answer(&p, path, .permanent(reason: reason))
            #expect(failed.settlements.contains(.failed(reason: reason, retryable: false)))
            #expect(p.state.totals.failed == index + 1)
        }
        #expect(p.state.pausedReason == nil)
        #expect(p.state.files.awaitingCredentials == [inFlight[0]], "the refused file still waits; none failed for a 401")
    }

    @Test func pausedItTriesOneFileAfterTheBackoffDoublingUpToMaxBackoff() {
        var (p, inFlight) = Self.running(5, concurrency: 2, backoff: 30, maxBackoff: 100)
        _ = Self.refuseUntilPaused(&p, inFlight)
        for path in p.state.files.slots.sorted() { Self.answer(&p, path, Self.refused) }
        let pausedAt = p.now.mono
        #expect(Self.started(p.advance(by: 29.5)).isEmpty, "nothing before the backoff")
        var tries: [Double] = []
        for _ in 0..<4 {
            let effects = p.advanceToNextDeadline()
            let trial = Self.started(effects)
            #expect(trial.count == 1, "one file at a time: \(effects)")
            tries.append(p.now.mono - pausedAt)
            guard let path = trial.first else { return }
            Self.answer(&p, path, Self.refused)
            #expect(p.state.pausedReason == .rejected)
        }
        #expect(tries == [30, 90, 190, 290], "30 s, then 60, then capped at 100: \(tries)")
        #expect(p.state.totals.failed == 0)
    }

    @Test func eachTrialTakesAnotherFileUntilEveryOneWasTried() {
        var (p, inFlight) = Self.running(4, concurrency: 1, backoff: 1, maxBackoff: 1)
        _ = Self.refuseUntilPaused(&p, inFlight)
        var tried: [RelativePath] = []
        for _ in 0..<4 {
            guard let path = Self.started(p.advanceToNextDeadline()).first else { Issue.record("no trial"); return }
            tried.append(path)
            Self.answer(&p, path, Self.refused)
        }
        #expect(tried.first == RelativePath("f3"), "the file never tried goes first: \(tried)")
        #expect(Set(tried).count >= 3, "the refused files take turns: \(tried)")
    }

    @Test func aCredentialsChangeOrSIGHUPTriesAFileAtOnce() {
        var (p, inFlight) = Self.running(6)
        _ = Self.refuseUntilPaused(&p, inFlight)
        for path in p.state.files.slots.sorted() { Self.answer(&p, path, Self.refused) }
        #expect(Self.started(p.advance(by: 1)).isEmpty)
        let now = p.send(.credentialsChanged)
        #expect(Self.started(now).count == 1, "\(now)")
        #expect(now.logged("credentials may have changed; trying a file now").count == 1)
        #expect(Self.started(p.send(.credentialsChanged)).isEmpty, "still one at a time")
    }

    @Test func theFirstDeliveryResumesTheProfileAndBringsBackTheRefusedFiles() {
        var (p, inFlight) = Self.running(8, concurrency: 2)
        _ = Self.refuseUntilPaused(&p, inFlight)
        for path in p.state.files.slots.sorted() { Self.answer(&p, path, Self.refused) }
        let refused = p.state.files.awaitingCredentials
        guard let trial = Self.started(p.advanceToNextDeadline()).first else { Issue.record("no trial"); return }
        let resumed = Self.answer(&p, trial, .delivered(status: 201))
        #expect(p.state.pausedReason == nil)
        #expect(resumed.logged("destination accepts our credentials again; resuming").count == 1)
        #expect(p.state.files.awaitingCredentials.isEmpty)
        #expect(Self.started(resumed).count == 2, "every slot busy again")
        let back = Set(resumed.claims + Self.started(resumed))
        #expect(refused.isSubset(of: back.union(p.state.files.waiting.paths)), "refused files in line again")
        // Everything arrives, none failed.
        var queue = Self.started(resumed)
        var sent = 1
        while !queue.isEmpty {
            queue += Self.started(Self.answer(&p, queue.removeFirst(), .delivered(status: 201)))
            sent += 1
        }
        #expect(sent == 8 && p.state.totals.sent == 8 && p.state.totals.failed == 0)
        #expect(p.state.isIdle)
    }

    @Test func aRefusedFileTheWatcherSeesAgainIsNotTakenTwice() {
        var (p, inFlight) = Self.running(3, concurrency: 1)
        let a = inFlight[0]
        let next = Self.started(Self.answer(&p, a, Self.refused))
        #expect(p.send(.found([QueuedFile(a)])).claims.isEmpty, "it waits apart, seen or not")
        let delivered = Self.answer(&p, next[0], .delivered(status: 201))
        #expect(delivered.claims.filter { $0 == a }.count == 1, "back in line once")
        var queue = Self.started(delivered)
        var claims = delivered.claims.filter { $0 == a }.count
        while !queue.isEmpty {
            let step = Self.answer(&p, queue.removeFirst(), .delivered(status: 201))
            claims += step.claims.filter { $0 == a }.count
            queue += Self.started(step)
        }
        #expect(claims == 1, "no second look at a file already in line")
        #expect(p.state.totals.sent == 3 && p.state.isIdle)
    }

    @Test func aLoneRefusedFilePausesAtOnceAndIsTriedAgainAfterTheBackoff() {
        var (p, inFlight) = Self.running(1, backoff: 10)
        let effects = Self.answer(&p, inFlight[0], Self.refused)
        #expect(p.state.pausedReason == .rejected, "nothing else to try: waiting for a delivery would wait for ever")
        #expect(effects.logged(Self.pauseLine).count == 1)
        #expect(ProfileCore.nextDeadline(p.state, policy: p.policy, now: p.now) == 10)
        #expect(Self.started(p.advanceToNextDeadline()) == [inFlight[0]])
    }

    @Test func retriesDueMeanwhileWaitForTheResume() {
        var (p, inFlight) = Self.running(3, concurrency: 3)
        p.send(.retriesFound([RetryEntry(path: RelativePath("r"), due: p.now.wall.addingTimeInterval(5))]))
        _ = Self.refuseUntilPaused(&p, inFlight)
        #expect(p.advance(by: 6).moveBacks.isEmpty, "a paused profile moves nothing back")
    }

    @Test func runOnceStopsAtTheThirdRefusalLeavesTheFilesQueuedAndEnds() {
        var p = EmbeddedProfile(policy: ProfilePolicy(mode: .once, concurrency: 1, maxAttempts: 3, backoff: 1, maxBackoff: 2))
        var queue = Self.started(p.recover(Self.names(5)))
        var effects: [ProfileEffect] = []
        while !queue.isEmpty {
            let step = Self.answer(&p, queue.removeFirst(), Self.refused)
            effects += step
            queue += Self.started(step)
        }
        #expect(p.state.closed && p.state.totals.leftQueuedOffline, "exit 69, like an unreachable destination")
        #expect(p.state.totals.failed == 0 && p.state.totals.retried == 0)
        let line = effects.logLines.filter { $0.message.hasPrefix("destination refuses our credentials") }
        #expect(line.count == 1 && line.first?.level == .error, "\(line)")
        #expect(effects.settlements.count == 3, "no fourth file was tried")
        #expect(effects.contains(.drained))
    }

    @Test func aRefusedAttemptIsKeptButNotCounted() {
        var m = Manifest(id: "id", profile: "p", path: RelativePath("a"), size: 1, mtime: "m", sha256: nil,
                         contentType: "x", state: .uploading, createdAt: "c")
        m.attempts = [Manifest.Attempt(startedAt: "s")]
        let area = m.settle(.rejected(reason: "HTTP 403 Forbidden"), facts: .init(bytesSent: 1, httpStatus: 403), now: Date())
        #expect(area == nil, "stays in the outbox")
        #expect(m.state == .queued && m.lastError == "HTTP 403 Forbidden")
        #expect(m.attempts.count == 1 && m.attempts[0].rejected == true && m.attempts[0].httpStatus == 403)
        #expect(m.countedAttempts == 0)
        let line = String(decoding: try! m.encodedLine(), as: UTF8.self)
        #expect(line.contains("\"rejected\":true"), "\(line)")
    }
}
