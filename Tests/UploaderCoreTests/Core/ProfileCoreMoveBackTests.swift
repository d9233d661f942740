import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderCore
@testable import UploaderDecisions

/// A file found (a rescan, an inotify event) under a name whose file is being moved back from
/// retry/ waits for the move to end: a claim run beside the move took the record it had just
/// linked into the outbox for a move to retry/ cut short and removed it, and the file's attempts
/// were lost with it.
@Suite("A file found under a name whose file is in retry/ is claimed once its move back has ended")
struct ProfileCoreMoveBackTests {
    let a = RelativePath("a.bin")

    /// `a.bin` filed in retry/ after a 503, and its move back begun.
    private func movingBack() -> EmbeddedProfile {
        var p = EmbeddedProfile.daemon(backoff: 30, maxBackoff: 3600)
        p.recover(["a.bin"])
        let settle = p.send(.attempted(a, .outcome(.retryable(reason: "HTTP 503 Service Unavailable", retryAfter: nil))))
        guard case .retry(_, let due)? = settle.settlements.first else {
            Issue.record("no retry: \(settle)")
            return p
        }
        p.send(.settled(a, .filed(.retry, a, retryDue: due)))
        #expect(p.advanceToNextDeadline().moveBacks == [a])
        return p
    }

    @Test func noClaimStartsBesideTheMoveBackAndOneStartsWhenItEnds() {
        var p = movingBack()
        #expect(p.send(.found([QueuedFile(a)])).claims.isEmpty, "a claim beside the move back")
        #expect(p.send(.movedBack(a, to: QueuedFile(a))).claims == [a])
    }

    /// The move back went to `a.2.bin` (a new file had taken `a.bin`): both are claimed then.
    @Test func aNewFileUnderTheNameIsClaimedOnceTheMoveBackHasTakenAnother() {
        var p = movingBack()
        let a2 = RelativePath("a.2.bin")
        #expect(p.send(.found([QueuedFile(a)])).claims.isEmpty)
        #expect(Set(p.send(.movedBack(a, to: QueuedFile(a2))).claims) == [a, a2])
    }

    /// Seen again during its upload (the watcher reported its name), then filed in retry/: the
    /// name's file is the one in retry/, back by its move back; a claim queued now would run
    /// beside that move when it comes due.
    @Test func aFileSeenAgainDuringItsUploadAndFiledInRetryIsClaimedOnlyAfterItsMoveBack() {
        var p = EmbeddedProfile.daemon(backoff: 30, maxBackoff: 3600)
        p.recover(["a.bin"])
        p.send(.found([QueuedFile(a)]))
        let settle = p.send(.attempted(a, .outcome(.retryable(reason: "HTTP 503 Service Unavailable", retryAfter: nil))))
        guard case .retry(_, let due)? = settle.settlements.first else {
            Issue.record("no retry: \(settle)")
            return
        }
        #expect(p.send(.settled(a, .filed(.retry, a, retryDue: due))).claims.isEmpty, "a claim of the name its file left")
        #expect(p.advanceToNextDeadline().moveBacks == [a])
        #expect(p.send(.movedBack(a, to: QueuedFile(a))).claims == [a])
    }

    /// Seen again during its upload, filed in retry/, and gone from there when its move back came
    /// (`uploader retry` had taken it back): claimed again with the rank its facts give it, not
    /// with none (journalled seed 6010891 and noJournal seed 7008801: a free slot went to a file
    /// that comes after it by `order`).
    @Test(arguments: [UploadOrder.newest, .oldest, .largest, .smallest])
    func aFileSeenAgainAndFiledInRetryKeepsItsRankAfterItsMoveBack(_ order: UploadOrder) {
        var policy = EmbeddedProfile.daemon(backoff: 30, maxBackoff: 3600).policy
        policy.order = order
        var p = EmbeddedProfile(policy: policy)
        let facts = QueuedFile(a, size: 4_096, mtimeNanos: 1_700_000_000_000_000_000)
        p.claimAll(p.send(.recovered(files: [facts], retries: [], ignoredDirectories: [])))
        p.send(.found([facts]))
        let settle = p.send(.attempted(a, .outcome(.retryable(reason: "HTTP 503 Service Unavailable", retryAfter: nil))))
        guard case .retry(_, let due)? = settle.settlements.first else {
            Issue.record("no retry: \(settle)")
            return
        }
        p.send(.settled(a, .filed(.retry, a, retryDue: due)))
        #expect(p.advanceToNextDeadline().moveBacks == [a])
        #expect(p.send(.movedBack(a, to: nil)).claims == [a])
        p.send(.claimed(a, .ready))
        #expect(p.state.files.rank(of: a) == order.rank(facts))
    }

    /// A move back that failed with its record still in retry/ (a refused write, a name taken) is
    /// tried again a few seconds later: the core forgot it until the next start (noJournal seed
    /// 400720, `everyFileSettles`: the file was still in retry/ at the end).
    @Test func aMoveBackThatFailedIsTriedAgainAFewSecondsLater() {
        var p = movingBack()
        #expect(p.send(.moveBackFailed(a)).moveBacks.isEmpty)
        #expect(p.state.retries.stage(of: a) != nil, "still held for retry")
        #expect(p.advance(by: p.policy.unwritableRetry - 0.5).moveBacks.isEmpty)
        #expect(p.advance(by: 1).moveBacks == [a])
    }

    /// Reported due again while its move back runs (a rescan, or a second finisher of its cut move
    /// into retry/): the next move back waits for this one to end. Two at once raced on the same
    /// names and brought the file back under two (journalled seed 14005609 of the simulator: one
    /// file sent twice, and in sent/ under `a.bin` and `a.2.bin`).
    @Test func aFileDueAgainWhileItMovesBackMovesBackAgainOnlyOnceThatHasEnded() {
        var p = movingBack()
        #expect(p.send(.retriesFound([RetryEntry(path: a, due: p.now.wall)])).moveBacks.isEmpty, "a second move back beside the first")
        #expect(p.advance(by: 5).moveBacks.isEmpty, "a second move back beside the first")
        #expect(p.send(.movedBack(a, to: nil)).moveBacks == [a], "due again, asked for once the first has ended")
        #expect(p.send(.movedBack(a, to: nil)).moveBacks.isEmpty)
        #expect(p.state.retries.stage(of: a) == nil)
    }

    /// Due again later than now: held until then once the running move back has ended.
    @Test func aFileDueAgainLaterWaitsForThatTimeAfterItsMoveBack() {
        var p = movingBack()
        p.send(.retriesFound([RetryEntry(path: a, due: p.now.wall.addingTimeInterval(60))]))
        #expect(p.send(.movedBack(a, to: nil)).moveBacks.isEmpty)
        #expect(p.advance(by: 59).moveBacks.isEmpty)
        #expect(p.advance(by: 2).moveBacks == [a])
    }

    /// A claim of `a.bin` runs (the start-up found it in the outbox: a move into retry/ cut after
    /// its links) when a retry entry for that name comes due (retry/'s scan found the same file
    /// there): the move back waits for the claim, which is finishing that very move, and starts once
    /// it has ended (journalled seed 15002714 of the simulator: both ran at once, the claim linked
    /// the file into retry/ again after the move back had taken it out, and removed the record the
    /// move back had put in the outbox: the file was left in retry/ without a manifest).
    @Test func aMoveBackDueWhileAClaimOfItsNameRunsWaitsForThatClaim() {
        var p = EmbeddedProfile.daemon(backoff: 30, maxBackoff: 3600)
        #expect(p.send(.recovered(files: [QueuedFile(a)], retries: [], ignoredDirectories: [])).claims == [a])
        let due = RetryEntry(path: a, due: p.now.wall)
        #expect(p.send(.retriesFound([due])).moveBacks.isEmpty, "a move back beside the claim")
        #expect(p.advance(by: 5).moveBacks.isEmpty, "a move back beside the claim")
        #expect(ProfileCore.nextDeadline(p.state, policy: p.policy, now: p.now) == nil, "a timer for a move back that must wait")
        #expect(p.send(.claimed(a, .finishedByRecovery(retry: due))).moveBacks == [a])
    }

    /// The start-up reports both at once: the file under the name in the outbox, and the retry
    /// entry due now. One of the claim and the move back runs, and the other after it.
    @Test func aClaimAndAMoveBackOfOneNameNeverRunAtOnce() {
        var p = EmbeddedProfile.daemon(backoff: 30, maxBackoff: 3600)
        let due = RetryEntry(path: a, due: p.now.wall)
        let first = p.send(.recovered(files: [QueuedFile(a)], retries: [due], ignoredDirectories: []))
        #expect(first.claims.count + first.moveBacks.count == 1, "\(first)")
        if first.moveBacks == [a] {
            #expect(p.send(.movedBack(a, to: QueuedFile(a))).claims == [a], "the name claimed once the move back has ended")
        } else {
            #expect(p.send(.claimed(a, .finishedByRecovery(retry: due))).moveBacks == [a])
        }
    }

    /// With no claim ahead (each slot claims its own file): `a.bin` waits in line for the one slot
    /// when its name's retry entry comes due and starts moving back; the slot, once free, does not
    /// claim it beside that move, and does once the move has ended.
    @Test func aFileWaitingInLineIsNotClaimedBesideTheMoveBackOfItsName() {
        var p = EmbeddedProfile.daemon(concurrency: 1, claimAhead: 0, backoff: 30, maxBackoff: 3600)
        let b = RelativePath("b.bin")
        #expect(p.send(.recovered(files: [QueuedFile(b)], retries: [], ignoredDirectories: [])).claimsInSlots == [b])
        p.send(.found([QueuedFile(a)]))
        #expect(p.send(.retriesFound([RetryEntry(path: a, due: p.now.wall)])).moveBacks == [a])
        p.send(.claimed(b, .ready))
        let sent = p.send(.attempted(b, .outcome(.delivered(status: 201))))
        #expect(!sent.claimsInSlots.contains(a), "a claim in a slot beside the move back")
        #expect(p.send(.settled(b, .filed(.sent, b, retryDue: nil))).claimsInSlots.isEmpty, "a claim in a slot beside the move back")
        #expect(p.send(.movedBack(a, to: QueuedFile(a))).claimsInSlots == [a])
    }
}

