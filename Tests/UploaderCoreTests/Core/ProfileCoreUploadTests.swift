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

/// A file's way through the owner: claim, slot, attempt, settlement; retries on a clock the test moves.
@Suite("The core decides each file's next step from typed events")
struct ProfileCoreUploadTests {
    let a = RelativePath("a.bin")

    @Test func aClaimedFileIsUploadedThenFiledAsSent() {
        var p = EmbeddedProfile.daemon()
        let effects = p.recover(["a.bin"])
        #expect(effects.claims == [a])
        #expect(effects.uploads == [a])
        let settle = p.send(.attempted(a, .outcome(.delivered(status: 201))))
        #expect(settle.settlements == [.sent(at: p.now.wall)])
        #expect(settle.logged("sent").count == 1)
        #expect(p.state.totals.sent == 1)
        p.send(.settled(a, .filed(.sent, a, retryDue: nil)))
        #expect(p.state.isIdle)
    }

    @Test func aRetryableFailureWaitsItsBackoffThenComesBack() {
        var p = EmbeddedProfile.daemon(backoff: 30, maxBackoff: 3600)
        p.recover(["a.bin"])
        let settle = p.send(.attempted(a, .outcome(.retryable(reason: "HTTP 503 Service Unavailable", retryAfter: nil))))
        guard case .retry(_, let due)? = settle.settlements.first else { Issue.record("no retry: \(settle)"); return }
        let delay = due.timeIntervalSince(p.now.wall)
        #expect(delay >= 0 && delay <= 30, "full jitter within the first window")
        p.send(.settled(a, .filed(.retry, a, retryDue: due)))
        #expect(p.advance(by: max(0, delay - 0.5)).moveBacks.isEmpty, "nothing before it is due")
        #expect(p.advanceToNextDeadline().moveBacks == [a])
        let back = p.send(.movedBack(a, to: QueuedFile(a)))
        #expect(back.claims == [a])
    }

    @Test func retryAfterWinsOverTheBackoffButNotOverMaxBackoff() {
        var p = EmbeddedProfile.daemon(backoff: 1, maxBackoff: 60)
        p.recover(["a.bin"])
        let settle = p.send(.attempted(a, .outcome(.retryable(reason: "HTTP 429", retryAfter: 120))))
        #expect(settle.settlements == [.retry(reason: "HTTP 429", due: p.now.wall.addingTimeInterval(60))])
    }

    @Test func theLastAllowedAttemptFailsForGood() {
        var p = EmbeddedProfile.daemon(maxAttempts: 3)
        p.recover(["a.bin"])
        let settle = p.send(.attempted(a, .outcome(.retryable(reason: "HTTP 500", retryAfter: nil), attempts: 3)))
        #expect(settle.settlements == [.failed(reason: "HTTP 500 (gave up after 3 attempts)", retryable: true)])
        #expect(p.state.totals.failed == 1 && p.state.totals.retried == 0)
    }

    @Test func aPermanentAnswerFailsAtOnce() {
        var p = EmbeddedProfile.daemon()
        p.recover(["a.bin"])
        let settle = p.send(.attempted(a, .outcome(.permanent(reason: "HTTP 415 Unsupported Media Type"))))
        #expect(settle.settlements == [.failed(reason: "HTTP 415 Unsupported Media Type", retryable: false)])
    }

    @Test func aFileChangedDuringUploadIsQueuedAgainNotSent() {
        var p = EmbeddedProfile.daemon()
        p.recover(["a.bin"])
        var report = AttemptReport.outcome(.delivered(status: 201))
        report.changed = "modified"
        #expect(p.send(.attempted(a, report)).settlements == [.changed("modified")])
        #expect(p.state.totals.sent == 0)
        #expect(p.send(.settled(a, .requeued)).claims == [a])
    }

    @Test func withConcurrencyOneTheSlotIsTakenBeforeAnyAttemptIsRecorded() {
        var p = EmbeddedProfile.daemon(concurrency: 1)
        let effects = p.recover(["a", "b", "c", "d"])
        // `upload` is the effect that writes the attempt: one at a time, however many are claimed.
        #expect(effects.claims.count == 4)
        #expect(effects.uploads == [RelativePath("a")])
        #expect(p.state.files.ready == ["b", "c", "d"].map(RelativePath.init))
        let names = ["a", "b", "c", "d"].map(RelativePath.init)
        for i in 0..<3 {
            // The request ended and the slot is free, but the record still says `uploading` until
            // the settle rewrites it: only then does the next file's attempt get written.
            let ended = p.send(.attempted(names[i], .outcome(.delivered(status: 200))))
            #expect(ended.uploads.isEmpty && ended.settlements.count == 1)
            #expect(p.state.files.slots.isEmpty)
            let rewritten = p.send(.recordRewritten(names[i]))
            #expect(rewritten.uploads == [names[i + 1]])
            #expect(p.state.files.slots == [names[i + 1]])
            // Its moves go on beside the next upload: filing away needs no slot.
            #expect(p.send(.settled(names[i], .filed(.sent, names[i], retryDue: nil))).uploads.isEmpty)
        }
    }

    /// A settle that ends without rewriting the record first (requeued, or its write failed) frees
    /// the record's place too; an upload that never wrote its attempt frees it at once.
    @Test func aRecordsPlaceIsFreedByTheSettleOrAtOnceWhenNothingWasWritten() {
        var p = EmbeddedProfile.daemon(concurrency: 1)
        p.recover(["a", "b", "c"])
        let a = RelativePath("a"), b = RelativePath("b"), c = RelativePath("c")
        p.send(.attempted(a, .outcome(.interrupted(connected: false))))
        #expect(p.send(.settled(a, .requeued)).uploads == [b], "requeued: the settle rewrote the record and said so by ending")
        // b's claim is outdated: nothing was written for it. a, requeued, is being claimed again and ranks before c.
        #expect(p.send(.attempted(b, .outcome(.claimOutdated))).uploads.isEmpty)
        #expect(p.send(.claimed(a, .ready)).uploads == [a], "b's place was freed")
        #expect(p.state.files.ready == [c])
    }

    @Test func claimsRunAheadOnlyAsFarAsAllowed() {
        var p = EmbeddedProfile.daemon(concurrency: 2, claimAhead: 3)
        let first = p.send(.recovered(files: (0..<10).map { QueuedFile(RelativePath("f\($0)")) }, retries: [], ignoredDirectories: []))
        #expect(first.claims.count == 3)
        #expect(first.claimsInSlots.isEmpty)
        #expect(p.state.files.waiting.count == 7)
    }

    @Test func withNothingClaimedAheadEachFileIsOneJobThatHoldsItsSlotFromTheClaimOn() {
        var p = EmbeddedProfile.daemon(concurrency: 2, claimAhead: 0)
        let names = (0..<4).map { RelativePath("f\($0)") }
        let first = p.send(.recovered(files: names.map { QueuedFile($0) }, retries: [], ignoredDirectories: []))
        #expect(first.claimsInSlots == [names[0], names[1]])
        #expect(first.claims.isEmpty && first.uploads.isEmpty)
        #expect(p.state.files.slots == [names[0], names[1]])
        // Ready: the same job sends it; nothing new is asked for, the slot stays taken.
        #expect(p.send(.claimed(names[0], .ready)).isEmpty)
        #expect(p.state.files.stage(of: names[0]) == .sending(trial: false) && !p.state.files.claims.isEmpty)
        // The request ended and its job files it: once its record says sent, the slot goes to the
        // next file, again as one job; the file is held until its move is reported.
        var delivered = AttemptReport.outcome(.delivered(status: 201))
        delivered.filing = true
        let next = p.send(.attempted(names[0], delivered))
        #expect(next.claimsInSlots == [names[2]])
        #expect(next.settlements.isEmpty)
        #expect(p.state.totals.sent == 1)
        #expect(p.state.holds(names[0]))
        #expect(p.send(.settled(names[0], .filed(.sent, names[0], retryDue: nil))).isEmpty)
        #expect(!p.state.holds(names[0]))
    }

    @Test func anUploadJobFilingItsFileFreesTheSlotAndTheRecordAtOnceWithClaimsAhead() {
        var p = EmbeddedProfile.daemon(concurrency: 1, claimAhead: 2)
        let names = [RelativePath("a"), RelativePath("b")]
        p.send(.recovered(files: names.map { QueuedFile($0) }, retries: [], ignoredDirectories: []))
        #expect(p.send(.claimed(names[0], .ready)).uploads == [names[0]])
        #expect(p.send(.claimed(names[1], .ready)).uploads.isEmpty)
        var delivered = AttemptReport.outcome(.delivered(status: 201))
        delivered.filing = true
        // No settle is asked for (the job files it); the record says sent, so b may go.
        let next = p.send(.attempted(names[0], delivered))
        #expect(next.settlements.isEmpty && next.uploads == [names[1]])
        #expect(next.logged("sent").count == 1)
        #expect(p.state.files.paths(.settling) == [names[0]])
        p.send(.settled(names[0], .filed(.sent, names[0], retryDue: nil)))
        #expect(p.state.files.settling == 0 && !p.state.holds(names[0]))
    }

    @Test func theUploadOrdersADeliveredFileIntoSentAndAReportWithoutFilingGetsASettle() {
        var p = EmbeddedProfile.daemon(concurrency: 1, claimAhead: 1)
        let name = RelativePath("a")
        p.send(.recovered(files: [QueuedFile(name)], retries: [], ignoredDirectories: []))
        let upload = p.send(.claimed(name, .ready))
        #expect(upload.contains { if case .upload(name, let plan) = $0 { plan.onDelivered == .fileInSent } else { false } })
        // A job that reports a delivery without filing it (a plan of `.report`) leaves it to the core.
        let after = p.send(.attempted(name, .outcome(.delivered(status: 201))))
        #expect(after.settlements == [.sent(at: p.now.wall)])
        #expect(after.logged("sent").count == 1 && p.state.totals.sent == 1)
    }

    @Test func theRecordAClaimWroteAsideIsUsedOnlyWhileYoungerThanThePolicysLifetime() {
        var p = EmbeddedProfile.daemon(concurrency: 1, claimAhead: 2)
        let names = [RelativePath("a"), RelativePath("b")]
        p.send(.recovered(files: names.map { QueuedFile($0) }, retries: [], ignoredDirectories: []))
        func plan(_ effects: [ProfileEffect], _ path: RelativePath) -> UploadPlan? {
            effects.lazy.compactMap { if case .upload(path, let plan) = $0 { plan } else { nil } }.first
        }
        #expect(plan(p.send(.claimed(names[0], .ready)), names[0])?.record == .prepared, "a slot free at once")
        p.send(.claimed(names[1], .ready))
        // b waits for a's slot longer than the lifetime (1 s): its upload writes a fresh record.
        p.advance(by: 1.5)
        var delivered = AttemptReport.outcome(.delivered(status: 201))
        delivered.filing = true
        #expect(plan(p.send(.attempted(names[0], delivered)), names[1])?.record == .fresh)
    }

    @Test func aClaimInItsSlotHasNoRecordAsideAndWritesItsOwn() {
        var p = EmbeddedProfile.daemon(concurrency: 1, claimAhead: 0)
        let first = p.send(.recovered(files: [QueuedFile(RelativePath("a"))], retries: [], ignoredDirectories: []))
        let plan = first.lazy.compactMap { if case .claimAndUpload(RelativePath("a"), let plan) = $0 { plan } else { nil } }.first
        #expect(plan?.record == .fresh && plan?.onDelivered == .fileInSent)
    }

    /// One file in its slot (no claims ahead), delivered, its job filing it; the effects of that report.
    private static func filing(_ name: RelativePath, _ p: inout EmbeddedProfile) -> [ProfileEffect] {
        p.send(.recovered(files: [QueuedFile(name)], retries: [], ignoredDirectories: []))
        p.send(.claimed(name, .ready))
        var report = AttemptReport.outcome(.delivered(status: 201))
        report.filing = true
        return p.send(.attempted(name, report))
    }

    @Test func aFileTheJobFoundChangedWhileFilingItWaitsAgainAfterItsMove() {
        var p = EmbeddedProfile.daemon(concurrency: 1, claimAhead: 0)
        let name = RelativePath("log.txt")
        #expect(Self.filing(name, &p).claimsInSlots.isEmpty, "the file is held until its move is reported")
        let effects = p.send(.settled(name, .requeued))
        #expect(effects.claimsInSlots == [name])
    }

    @Test func aFileChangedDuringItsMoveIsRequeuedAsChangedByTheCoresOwnSettle() {
        var p = EmbeddedProfile.daemon(concurrency: 1, claimAhead: 0)
        let name = RelativePath("log.txt")
        _ = Self.filing(name, &p)
        let changed = p.send(.settled(name, .changedDuringMove("written to")))
        #expect(changed.settlements == [.changed("written to")], "the core asks for the changed record")
        #expect(changed.logged("file changed after its upload; uploading it again").map(\.level) == [.warn])
        #expect(changed.claimsInSlots.isEmpty && p.state.holds(name), "held until the record is rewritten")
        #expect(p.send(.settled(name, .requeued)).claimsInSlots == [name], "then sent again")
    }

    /// A new file took the name meanwhile, so the changed one came back beside it: both are sent.
    @Test func aFileChangedDuringItsMoveThatCameBackBesideANewOneIsQueuedToo() {
        var p = EmbeddedProfile.daemon(concurrency: 1, claimAhead: 0)
        let name = RelativePath("log.txt"), beside = RelativePath("log.2.txt")
        _ = Self.filing(name, &p)
        let changed = p.send(.settled(name, .changedDuringMove("written to", beside: QueuedFile(beside, size: 9))))
        #expect(changed.settlements == [.changed("written to")])
        #expect(changed.logged("file changed after its upload; uploading it again beside the new file under its name").map(\.level) == [.warn])
        #expect(changed.claimsInSlots == [beside], "the slot is free (the record no longer says uploading): it starts at once")
        p.send(.settled(name, .requeued))
        #expect(p.state.files.stage(of: name) == .waiting(quiet: false), "the new file under the name waits its turn")
    }

    @Test func aClaimInItsSlotThatFindsNothingToSendFreesTheSlotForTheNextFile() {
        var p = EmbeddedProfile.daemon(concurrency: 1, claimAhead: 0)
        let names = [RelativePath("gone"), RelativePath("next")]
        p.send(.recovered(files: names.map { QueuedFile($0) }, retries: [], ignoredDirectories: []))
        let after = p.send(.claimed(names[0], .vanished))
        #expect(after.claimsInSlots == [names[1]])
        #expect(p.state.files.slots == [names[1]])
    }

    @Test func aClaimInItsSlotCutByAnOutageWaitsAgainInItsPlace() {
        var p = EmbeddedProfile.daemon(concurrency: 1, claimAhead: 0)
        let names = [RelativePath("a"), RelativePath("b")]
        p.send(.recovered(files: names.map { QueuedFile($0) }, retries: [], ignoredDirectories: []))
        p.send(.claimed(names[0], .ready))
        // The upload part found the destination gone; meanwhile nothing else starts.
        let cut = p.send(.attempted(names[0], AttemptReport.outcome(.unreachable(reason: "refused"))))
        #expect(!p.state.reachability.isOnline)
        #expect(cut.settlements == [.unreachable(reason: "refused")] && cut.claimsInSlots.isEmpty)
        p.send(.settled(names[0], .requeued))
        #expect(p.state.files.waiting.paths.first == names[0])
        // A claim cancelled in its slot by an outage is queued again, not dropped.
        var q = EmbeddedProfile.daemon(concurrency: 1, claimAhead: 0)
        q.send(.recovered(files: names.map { QueuedFile($0) }, retries: [], ignoredDirectories: []))
        q.send(.claimed(names[0], .cancelled))
        #expect(q.state.files.stage(of: names[0])?.kind == .waiting || q.state.files.slots.contains(names[0]))
        #expect(!q.state.refused.contains(names[0]))
    }

    @Test func aFileSeenAgainWhileUploadingIsCheckedOnceMoreAndItsVanishingIsQuiet() {
        var p = EmbeddedProfile.daemon()
        p.recover(["a.bin"])
        #expect(p.send(.found([QueuedFile(a)])).claims.isEmpty, "never two jobs on one file")
        // Filed in sent/ (one filed in retry/ is looked at once its move back has ended: ProfileCoreMoveBackTests).
        p.send(.attempted(a, .outcome(.delivered(status: 201))))
        let after = p.send(.settled(a, .filed(.sent, a, retryDue: nil)))
        #expect(after.claims == [a], "the name is looked at once more")
        let gone = p.send(.claimed(a, .vanished))
        #expect(gone.logLines.map(\.level) == [.debug], "a re-check that finds nothing is not news")
    }

    /// A claim the disk refused for now (an I/O error while checking the file against its record)
    /// leaves the file queued and is tried again a few seconds later, said once; a lasting refusal
    /// waits until the name is seen again.
    @Test func aClaimRefusedForNowIsTriedAgainFiveSecondsLaterAndSaidOnce() {
        var p = EmbeddedProfile.daemon()
        #expect(p.send(.recovered(files: [QueuedFile(a)], retries: [], ignoredDirectories: [])).claims == [a])
        let first = p.send(.claimed(a, .refusedForNow("cannot read the file to check it against its record: Input/output error")))
        #expect(first.logged("not uploaded yet, claimed again in a few seconds: cannot read the file to check it against its record: Input/output error")
                    .map(\.level) == [.warn])
        #expect(p.state.refused.isEmpty, "not counted as refused: it is still queued")
        #expect(p.advance(by: 4.9).claims.isEmpty)
        #expect(p.advance(by: 0.2).claims == [a])
        #expect(p.send(.claimed(a, .refusedForNow("cannot read the file to check it against its record: Input/output error"))).logLines.isEmpty,
                "said once per file")
        #expect(p.advance(by: 5.1).claims == [a])
        #expect(p.send(.claimed(a, .ready)).uploads == [a], "claimed at last, it is uploaded")

        var lasting = EmbeddedProfile.daemon()
        lasting.send(.recovered(files: [QueuedFile(a)], retries: [], ignoredDirectories: []))
        lasting.send(.claimed(a, .refused("symlink, never followed")))
        #expect(lasting.advance(by: 3600).claims.isEmpty, "a lasting refusal waits for the name to be seen again")
        #expect(lasting.send(.found([QueuedFile(a)])).claims == [a])
    }

    @Test func aFileThatVanishedBeforeItsClaimIsLoggedOnce() {
        var p = EmbeddedProfile.daemon()
        let first = p.send(.recovered(files: [QueuedFile(a)], retries: [], ignoredDirectories: []))
        #expect(first.claims == [a])
        #expect(p.send(.claimed(a, .vanished)).logged("file vanished before upload; dropped from the queue").map(\.level) == [.info])
    }

    @Test func aManifestThatCannotBeWrittenIsTriedAgainFiveSecondsLater() {
        var p = EmbeddedProfile.daemon()
        p.recover(["a.bin"])
        let first = p.send(.attempted(a, .outcome(.manifestUnwritable(reason: "No space left on device"))))
        #expect(first.contains(.release(a)))
        #expect(first.logLines.count == 1)
        #expect(p.advance(by: 4.9).claims.isEmpty)
        #expect(p.advance(by: 0.2).claims == [a])
        p.send(.claimed(a, .ready))
        #expect(p.send(.attempted(a, .outcome(.manifestUnwritable(reason: "No space left on device")))).logLines.isEmpty,
                "warned once per file")
    }

    @Test func backoffJitterReplaysFromTheSeed() {
        func due(seed: UInt64) -> Date? {
            var p = EmbeddedProfile(policy: ProfilePolicy(mode: .daemon, concurrency: 1, maxAttempts: 5, backoff: 30, maxBackoff: 60), seed: seed)
            p.recover(["a.bin"])
            guard case .retry(_, let due)? = p.send(.attempted(RelativePath("a.bin"), .outcome(.retryable(reason: "x", retryAfter: nil)))).settlements.first
            else { return nil }
            return due
        }
        #expect(due(seed: 7) == due(seed: 7))
        #expect(due(seed: 7) != due(seed: 8))
    }
}
