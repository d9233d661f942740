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

/// Shutdown and `run --once`, on a clock moved by hand.
@Suite("Stopping and draining are decided by the core")
struct ProfileCoreStopTests {
    @Test func stopCancelsClaimsAtOnceLetsUploadsRunForTheGraceThenAbortsThem() {
        var p = EmbeddedProfile.daemon(concurrency: 1)
        let first = p.send(.recovered(files: ["a", "b", "c"].map { QueuedFile(RelativePath($0)) }, retries: [], ignoredDirectories: []))
        p.send(.claimed(RelativePath("a"), .ready))          // a: uploading
        p.send(.claimed(RelativePath("b"), .ready))          // b: claimed, waiting for the slot
        #expect(first.claims.count == 3)                      // c: still hashing
        let stop = p.send(.stop(grace: 30))
        #expect(stop.contains(.cancelClaims([RelativePath("c")])), "a hash in progress stops at once")
        #expect(stop.contains(.release(RelativePath("b"))))
        #expect(stop.cancelled.isEmpty, "the upload in flight may finish")
        #expect(p.send(.claimed(RelativePath("c"), .cancelled)).isEmpty)
        #expect(p.advance(by: 29).cancelled.isEmpty)
        let over = p.advance(by: 1)
        #expect(over.cancelled == [RelativePath("a")])
        #expect(over.logged("shutdown grace over; aborting uploads in flight (they stay queued)").count == 1)
        #expect(p.advance(by: 5).isEmpty, "aborted once")
        let interrupted = p.send(.attempted(RelativePath("a"), .outcome(.interrupted(connected: true))))
        #expect(interrupted.settlements == [.interrupted(connected: true)])
        #expect(p.send(.settled(RelativePath("a"), .requeued)) == [.stopped])
        #expect(p.state.phase == .stopped)
    }

    @Test func aStopWithNothingInFlightEndsAtOnce() {
        var p = EmbeddedProfile.daemon()
        p.send(.recovered(files: [], retries: [], ignoredDirectories: []))
        #expect(p.send(.stop(grace: 30)) == [.stopped])
    }

    @Test func newFilesFoundWhileStoppingAreLeftForTheNextStart() {
        var p = EmbeddedProfile.daemon()
        p.recover(["a"])
        p.send(.stop(grace: 30))
        #expect(p.send(.found([QueuedFile(RelativePath("z"))])).claims.isEmpty)
    }

    @Test func runOnceDrainsAndSaysSo() {
        var p = EmbeddedProfile(policy: ProfilePolicy(mode: .once, concurrency: 2, maxAttempts: 3, backoff: 1, maxBackoff: 2))
        let start = p.recover(["a", "b"])
        #expect(!start.contains(.drained))
        p.send(.attempted(RelativePath("a"), .outcome(.delivered(status: 200))))
        p.send(.attempted(RelativePath("b"), .outcome(.retryable(reason: "HTTP 503", retryAfter: nil))))
        p.send(.settled(RelativePath("a"), .filed(.sent, RelativePath("a"), retryDue: nil)))
        let last = p.send(.settled(RelativePath("b"), .filed(.retry, RelativePath("b"), retryDue: p.now.wall.addingTimeInterval(1))))
        #expect(last.contains(.drained), "a retry due later is not this run's business")
        #expect(p.state.totals.sent == 1 && p.state.totals.retried == 1)
    }

    @Test func runOnceTakesTheRetriesDueWhenItStartedAndNoOthers() {
        var p = EmbeddedProfile(policy: ProfilePolicy(mode: .once, concurrency: 2, maxAttempts: 3, backoff: 1, maxBackoff: 2))
        let due = RetryEntry(path: RelativePath("old"), due: p.now.wall.addingTimeInterval(-60))
        let later = RetryEntry(path: RelativePath("later"), due: p.now.wall.addingTimeInterval(60))
        let start = p.send(.recovered(files: [], retries: [due, later], ignoredDirectories: []))
        #expect(start.moveBacks == [RelativePath("old")])
        #expect(!start.contains(.drained), "not drained while a file is on its way back")
        let back = p.send(.movedBack(RelativePath("old"), to: QueuedFile(RelativePath("old"))))
        #expect(back.claims == [RelativePath("old")])
    }

    @Test func aRecordInRetryWithoutItsFileIsQuarantinedByTheCoresOrderAndAStopWaitsForIt() {
        var p = EmbeddedProfile.daemon()
        let orphan = RelativePath("orphan")
        let start = p.send(.recovered(files: [], retries: [RetryEntry(path: orphan, due: p.now.wall.addingTimeInterval(-1))],
                                      ignoredDirectories: []))
        #expect(start.moveBacks == [orphan])
        #expect(p.send(.recordWithoutFile(orphan)) == [.quarantine(orphan)])
        #expect(p.send(.stop(grace: 5)).isEmpty, "not stopped while the record is being moved aside")
        let done = p.send(.quarantined(orphan, .movedAside("quarantine/orphan.manifest.json.x")))
        #expect(done.logged("manifest in retry/ with no file (the file vanished); manifest moved aside").map(\.level) == [.warn])
        #expect(done.contains(.stopped) && p.state.retries.entries.isEmpty)
    }

    @Test func aRecordThatCannotBeMovedAsideIsAnErrorAndLeftAlone() {
        var p = EmbeddedProfile.daemon()
        let orphan = RelativePath("orphan")
        p.send(.recovered(files: [], retries: [RetryEntry(path: orphan, due: p.now.wall.addingTimeInterval(-1))], ignoredDirectories: []))
        p.send(.recordWithoutFile(orphan))
        let failed = p.send(.quarantined(orphan, .failed("EACCES")))
        #expect(failed.logged("manifest in retry/ with no file; cannot move it aside").map(\.level) == [.error])
        #expect(p.state.retries.movingBack == 0)
    }

    @Test func runOnceStopsStartingAtTheFirstUnreachableAnswer() {
        var p = EmbeddedProfile(policy: ProfilePolicy(mode: .once, concurrency: 1, maxAttempts: 3, backoff: 1, maxBackoff: 2))
        p.recover(["a", "b", "c"])
        let offline = p.send(.attempted(RelativePath("a"), .outcome(.unreachable(reason: "Connection refused"))))
        #expect(offline.uploads.isEmpty && offline.probes.isEmpty)
        #expect(offline.contains(.release(RelativePath("b"))) && offline.contains(.release(RelativePath("c"))))
        #expect(p.state.totals.leftQueuedOffline)
        #expect(p.send(.settled(RelativePath("a"), .requeued)).contains(.drained))
    }
}

/// The manifest record each settlement writes.
@Suite("Each settlement edits the manifest as the contract says")
struct ManifestSettlementTests {
    static func uploading() -> Manifest {
        var m = Manifest(id: "i", profile: "p", path: RelativePath("a"), size: 5, mtime: "2026-01-01T00:00:00.000Z",
                         sha256: nil, contentType: "text/plain", state: .uploading, createdAt: "2026-01-01T00:00:00.000Z")
        m.attempts = [Manifest.Attempt(startedAt: "2026-01-01T00:00:01.000Z")]
        return m
    }
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let facts = Manifest.AttemptFacts(bytesSent: 5, httpStatus: 503)

    @Test func aRetryEndsTheAttemptAndRecordsWhenItIsDue() {
        var m = Self.uploading()
        let area = m.settle(.retry(reason: "HTTP 503", due: now.addingTimeInterval(30)), facts: facts, now: now)
        #expect(area == .retry && m.state == .retry)
        #expect(m.nextAttemptAt == Timestamp.format(now.addingTimeInterval(30)))
        #expect(m.attempts.last?.httpStatus == 503 && m.attempts.last?.retryable == true && m.attempts.last?.endedAt != nil)
    }

    @Test func aConnectThatFailedIsNoAttempt() {
        var m = Self.uploading()
        #expect(m.settle(.unreachable(reason: "refused"), facts: facts, now: now) == nil)
        #expect(m.attempts.isEmpty && m.state == .queued && m.lastError == "refused")
    }

    @Test func aCancelBeforeTheRequestGotOutLeavesNoInterruptedAttempt() {
        var m = Self.uploading()
        _ = m.settle(.interrupted(connected: false), facts: facts, now: now)
        #expect(m.attempts.isEmpty)
        var n = Self.uploading()
        _ = n.settle(.interrupted(connected: true), facts: facts, now: now)
        #expect(n.attempts.count == 1 && n.attempts[0].interrupted == true && n.countedAttempts == 0)
    }

    /// The producer changed the file under its upload: the attempt is kept, not counted, so a
    /// file rewritten during its upload is sent again even with `max_attempts = 1` (noJournal
    /// seed 401868, `maxAttemptsRespected`: two counted attempts in sent/ with a maximum of one).
    @Test func anAttemptWhoseFileChangedUnderItIsNotCounted() {
        var m = Self.uploading()
        #expect(m.settle(.changed("size 256 → 108"), facts: facts, now: now) == nil)
        #expect(m.state == .queued && m.attempts.count == 1 && m.attempts[0].interrupted == true && m.countedAttempts == 0)
    }

    @Test func sentClearsTheLastError() {
        var m = Self.uploading()
        m.lastError = "HTTP 503"
        #expect(m.settle(.sent(at: now), facts: Manifest.AttemptFacts(bytesSent: 5, httpStatus: 201), now: now) == .sent)
        #expect(m.state == .sent && m.lastError == nil && m.sentAt == Timestamp.format(now))
    }

    @Test func aRequestThatCouldNotBeBuiltFailsWithoutAnAttempt() {
        var m = Self.uploading()
        #expect(m.settle(.failedWithoutAttempt(reason: "too large"), facts: facts, now: now) == .retry)
        #expect(m.attempts.isEmpty && m.state == .failed && m.lastError == "too large")
    }
}
