import Testing
import UploaderDecisions
import UploaderValues

/// What start-up's look at retry/ makes of each record there (`SpoolMoves.settleRetryRecord`), as
/// a table over names: a record waiting is due at its time, a cut move back is finished, a stale
/// one is removed, a record whose file has left is moved aside, and what cannot be looked at or
/// finished stays to be tried again — never taken for gone.
@Suite struct RetryRecordPlanTests {
    let a = RelativePath("a.bin")
    let naming = StoredAsNaming(prefixes: [.outbox: "outbox/", .sent: "sent/", .retry: "retry/"])

    /// `a.bin` and its record (in `state`, due at "t9") in retry/.
    func inRetry(_ state: Manifest.State) -> PlanNames {
        var names = PlanNames()
        names.names[SpoolPlace(.retry, a)] = PlanNames.file
        names.names[SpoolPlace(.retry, a, .record)] = PlanNames.record
        var record = PlanNames.manifest(a, state)
        record.storedAs = "retry/a.bin"
        record.nextAttemptAt = "t9"
        names.records[PlanNames.record] = record
        return names
    }

    func settle(_ names: inout PlanNames) -> RetryRecordSettlement {
        SpoolMoves.settleRetryRecord(a, naming: naming, on: &names)
    }

    var movedAside: SpoolPlace { SpoolPlace(.outbox, RelativePath(".quarantine/a.bin" + SpoolPlace.recordSuffix), .file) }

    @Test func aRecordWaitingForItsNextAttemptIsDueThenAndNothingMoves() {
        var names = inRetry(.retry)
        #expect(settle(&names) == .due(at: "t9"))
        #expect(names.names.count == 2)
    }

    @Test func aRecordFiledForGoodStaysAsItIs() {
        var names = inRetry(.failed)
        #expect(settle(&names) == .stays)
        #expect(names.names.count == 2)
    }

    @Test(arguments: [Manifest.State.retry, .failed, .sent])
    func aRecordWhoseFileHasLeftRetryIsMovedAside(_ state: Manifest.State) {
        var names = inRetry(state)
        names.names[SpoolPlace(.retry, a)] = nil
        #expect(settle(&names) == .settled)
        #expect(names.names[movedAside] == PlanNames.record && names.names[SpoolPlace(.retry, a, .record)] == nil)
        #expect(names.notes.map(\.message) == ["manifest in retry/ with no file; manifest moved aside"])
    }

    @Test func aFileThatCannotBeLookedAtIsNeverTakenForGone() {
        var names = inRetry(.retry)
        names.refuse = { step, _ in if case .lookUp(let place, _) = step, place.kind == .file { .other } else { nil } }
        #expect(settle(&names) == .due(at: "t9"))
        #expect(names.names[SpoolPlace(.retry, a, .record)] == PlanNames.record)
        #expect(names.notes.map(\.message) == ["cannot look at a file in retry/; its manifest stays"])
        #expect(names.notes.first?.withError == true)
    }

    @Test func aRecordThatCannotBeReadStays() {
        var names = inRetry(.retry)
        names.records[PlanNames.record] = nil
        #expect(settle(&names) == .stays)
        names.refuse = { step, _ in if case .readRecord = step { .other } else { nil } }
        #expect(settle(&names) == .stays)
        #expect(names.names.count == 2 && names.notes.isEmpty)
    }

    @Test(arguments: [Manifest.State.queued, .uploading])
    func aMoveBackCutShortIsFinished(_ state: Manifest.State) {
        var names = inRetry(state)
        #expect(settle(&names) == .movedBack(a))
        #expect(names.names[SpoolPlace(.outbox, a)] == PlanNames.file)
        #expect(names.names[SpoolPlace(.retry, a)] == nil && names.names[SpoolPlace(.retry, a, .record)] == nil)
    }

    @Test func aStaleMoveBackRecordWhoseFileTheOutboxHasLaterIsRemoved() {
        // The move back reached the outbox and a later attempt finished there; a power cut
        // brought the old `queued` record back in retry/.
        var names = inRetry(.queued)
        names.names[SpoolPlace(.retry, a)] = nil
        names.names[SpoolPlace(.outbox, a)] = PlanNames.file
        names.names[SpoolPlace(.outbox, a, .record)] = PlanNames.another
        var later = PlanNames.manifest(a, .sent)
        later.id = names.records[PlanNames.record]!.id
        names.records[PlanNames.another] = later
        #expect(settle(&names) == .settled)
        #expect(names.names[SpoolPlace(.retry, a, .record)] == nil)
        #expect(names.notes.map(\.message) == ["removed an old move-back record from retry/; the outbox has a later one"])
    }

    @Test func aMoveBackWhoseFileIsNowhereHasItsRecordMovedAside() {
        var names = inRetry(.queued)
        names.names[SpoolPlace(.retry, a)] = nil
        #expect(settle(&names) == .settled)
        #expect(names.names[movedAside] == PlanNames.record)
        #expect(names.notes.last?.message == "manifest in retry/ with no file; manifest moved aside")
    }

    @Test func aMoveBackTheDiskRefusesIsDueNowAndSaysWhy() {
        var names = inRetry(.queued)
        names.refuse = { step, _ in if case .link = step { .other } else { nil } }
        #expect(settle(&names) == .moveBackDueNow)
        #expect(names.names[SpoolPlace(.retry, a)] == PlanNames.file)
        let said = names.notes.last
        #expect(said?.message == "cannot finish an interrupted move back from retry/; it is tried again")
        #expect(said?.stop == .refused(.other) && said?.withError == true)
    }
}
