import Testing
import UploaderDecisions
import UploaderValues

/// The decisions of a move back from retry/ and of a delivered file written to after its upload
/// (`SpoolMoves`), as a table over names: what the spool holds, what others do meanwhile, where the
/// file and its record end.
@Suite struct MoveBackPlanTests {
    let a = RelativePath("a.bin")
    let naming = StoredAsNaming(prefixes: [.outbox: "outbox/", .sent: "sent/", .retry: "retry/"])

    /// `a.bin` and its record (in `state`) in retry/.
    func inRetry(_ state: Manifest.State = .retry) -> PlanNames {
        var names = PlanNames()
        names.names[SpoolPlace(.retry, a)] = PlanNames.file
        names.names[SpoolPlace(.retry, a, .record)] = PlanNames.record
        var record = PlanNames.manifest(a, state)
        record.storedAs = "retry/a.bin"
        names.records[PlanNames.record] = record
        return names
    }

    func record(_ names: PlanNames, _ place: SpoolPlace) -> Manifest? {
        names.names[place.record].flatMap { names.records[$0] }
    }

    @Test func aFileComesBackUnderItsNameWithAQueuedRecordAndLeavesRetry() throws {
        var names = inRetry()
        let back = try SpoolMoves.moveBack(fromRetry: a, resetBackoff: true, naming: naming, on: &names)
        #expect(back == a)
        #expect(names.names[SpoolPlace(.outbox, a)] == PlanNames.file)
        #expect(record(names, SpoolPlace(.outbox, a))?.state == .queued)
        #expect(names.names[SpoolPlace(.retry, a)] == nil && names.names[SpoolPlace(.retry, a, .record)] == nil)
        // The record reaches the outbox before the file does, and retry/ is fsynced after the file leaves it.
        let recordLink = names.performed.firstIndex { if case .link(let from, let to, _) = $0 { from.kind == .record && to.area == .outbox } else { false } }
        let fileLink = names.performed.firstIndex { if case .link(let from, let to, _) = $0 { from.kind == .file && to.area == .outbox } else { false } }
        #expect(recordLink! < fileLink!)
        #expect(names.performed.suffix(2) == [.unlink(SpoolPlace(.retry, a, .record), move: 0), .syncDirectory(SpoolPlace(.retry, a), moves: [0])])
    }

    @Test func aNameTakenByAnotherFileSendsItToTheNextFreeName() throws {
        var names = inRetry()
        names.names[SpoolPlace(.outbox, a)] = PlanNames.another
        let back = try SpoolMoves.moveBack(fromRetry: a, resetBackoff: false, naming: naming, on: &names)
        #expect(back == RelativePath("a.2.bin"))
        #expect(names.names[SpoolPlace(.outbox, a)] == PlanNames.another)
        #expect(names.names[SpoolPlace(.outbox, a, .record)] == nil)
        #expect(record(names, SpoolPlace(.outbox, back))?.state == .queued)
    }

    @Test func aFileDroppedUnderTheNameDuringTheMoveBackKeepsItAndTheMoveStartsOver() throws {
        var names = inRetry()
        var dropped = false
        names.meanwhile = { step, names in
            if !dropped, case .link(let from, let to, _) = step, from.kind == .file, to.area == .outbox {
                dropped = true
                names[to] = PlanNames.another
            }
        }
        let back = try SpoolMoves.moveBack(fromRetry: a, resetBackoff: false, naming: naming, on: &names)
        #expect(back == RelativePath("a.2.bin"))
        #expect(names.names[SpoolPlace(.outbox, a)] == PlanNames.another)
        #expect(names.names[SpoolPlace(.outbox, a, .record)] == nil, "our record is not left beside the new file")
        #expect(names.names[SpoolPlace(.outbox, back)] == PlanNames.file)
    }

    @Test func aMoveBackCutAfterItsRecordReachedTheOutboxIsResumed() throws {
        var names = inRetry()
        var queued = PlanNames.manifest(a, .queued)
        queued.storedAs = "retry/a.bin"
        let linked = FileIdentity(device: 1, inode: 500)
        names.records[linked] = queued
        names.names[SpoolPlace(.retry, a, .record)] = linked
        names.names[SpoolPlace(.outbox, a, .record)] = linked
        let back = try SpoolMoves.moveBack(fromRetry: a, resetBackoff: false, naming: naming, on: &names)
        #expect(back == a)
        #expect(!names.performed.contains { if case .writeRecord = $0 { true } else { false } }, "the record is not written again")
        #expect(names.names[SpoolPlace(.outbox, a)] == PlanNames.file)
        #expect(names.names[SpoolPlace(.retry, a)] == nil)
    }

    /// A move into retry/ cut before its outbox names went (a power cut undid their removal),
    /// after which retry/'s record was rewritten for a move back (`uploader retry`): the outbox
    /// holds the file, under the same inode as retry/, and the move's `failed` record; retry/ a
    /// later `queued` one. The cut move only has its outbox names left to remove, and the move
    /// back goes on from retry/'s record (noJournal seed 4485 of the long run: the move's link of
    /// its record into retry/ met the later record there, failed with EEXIST, and was tried again
    /// every few seconds forever, the file in both places).
    @Test func aCutMoveIntoRetryWhoseRecordThereIsLaterEndsThenTheFileComesBack() throws {
        var names = inRetry(.queued)
        let moved = FileIdentity(device: 1, inode: 600)
        var failed = PlanNames.manifest(a, .failed)
        failed.storedAs = "retry/a.bin"
        names.records[moved] = failed
        names.names[SpoolPlace(.outbox, a)] = PlanNames.file
        names.names[SpoolPlace(.outbox, a, .record)] = moved
        let back = try SpoolMoves.moveBack(fromRetry: a, resetBackoff: true, naming: naming, on: &names)
        #expect(back == a)
        #expect(names.names[SpoolPlace(.outbox, a)] == PlanNames.file)
        #expect(record(names, SpoolPlace(.outbox, a))?.state == .queued)
        #expect(names.names[SpoolPlace(.retry, a)] == nil && names.names[SpoolPlace(.retry, a, .record)] == nil)
        #expect(!names.performed.contains(.link(SpoolPlace(.outbox, a, .record), to: SpoolPlace(.retry, a, .record), move: 0)),
                "retry/'s later record is not overwritten by the cut move's")
    }

    @Test func anOldQueuedRecordWhoseFileLeftIsSupersededByTheOutboxsLaterOne() {
        var names = inRetry(.queued)
        names.names[SpoolPlace(.retry, a)] = nil
        let later = FileIdentity(device: 1, inode: 600)
        names.records[later] = PlanNames.manifest(a, .sent)
        names.names[SpoolPlace(.outbox, a, .record)] = later
        #expect(throws: PlanStop.supersededRecord(a)) { try SpoolMoves.moveBack(fromRetry: a, resetBackoff: false, naming: naming, on: &names) }
        #expect(names.names[SpoolPlace(.retry, a, .record)] == nil)
        #expect(names.names[SpoolPlace(.outbox, a, .record)] == later)
    }

    @Test func aRecordWhoseFileIsNowhereIsSaidNeverMovedBack() {
        var names = inRetry()
        names.names[SpoolPlace(.retry, a)] = nil
        #expect(throws: PlanStop.recordWithoutFile(a)) { try SpoolMoves.moveBack(fromRetry: a, resetBackoff: false, naming: naming, on: &names) }
        #expect(names.names[SpoolPlace(.outbox, a, .record)] == nil)
    }

    // MARK: Written to after its upload

    /// A delivery cut after its links: the `sent` record in the outbox, the file and a second name
    /// of the record in sent/, the file at `version` there.
    func deliveredThenWritten(changed: Bool) -> (PlanNames, Manifest) {
        var names = PlanNames()
        var sent = PlanNames.manifest(a, .sent)
        sent.storedAs = "sent/a.bin"
        names.names[SpoolPlace(.sent, a)] = PlanNames.file
        names.names[SpoolPlace(.sent, a, .record)] = PlanNames.record
        names.names[SpoolPlace(.outbox, a, .record)] = PlanNames.record
        names.records[PlanNames.record] = sent
        names.versions[PlanNames.file] = changed ? (2, "t1") : (1, "t0")
        return (names, sent)
    }

    @Test func aDeliveryWrittenToAfterItsUploadComesBackQueuedUnderItsName() throws {
        var (names, sent) = deliveredThenWritten(changed: true)
        let requeued = try SpoolMoves.requeueIfChangedAfterUpload(a, manifest: sent, at: SpoolPlace(.sent, a), on: &names)
        #expect(requeued == .underItsName)
        #expect(names.names[SpoolPlace(.outbox, a)] == PlanNames.file)
        #expect(record(names, SpoolPlace(.outbox, a))?.state == .queued)
        #expect(names.names[SpoolPlace(.sent, a)] == nil && names.names[SpoolPlace(.sent, a, .record)] == nil)
    }

    @Test func aChangedDeliveryWhoseNameANewFileTookComesBackBesideIt() throws {
        var (names, sent) = deliveredThenWritten(changed: true)
        names.names[SpoolPlace(.outbox, a)] = PlanNames.another
        let requeued = try SpoolMoves.requeueIfChangedAfterUpload(a, manifest: sent, at: SpoolPlace(.sent, a), on: &names)
        #expect(requeued == .beside(RelativePath("a.2.bin")))
        #expect(names.names[SpoolPlace(.outbox, a)] == PlanNames.another)
        #expect(names.names[SpoolPlace(.outbox, RelativePath("a.2.bin"))] == PlanNames.file)
        #expect(names.names[SpoolPlace(.outbox, a, .record)] == nil, "the old record goes: beside the new file it would be taken for its own")
        #expect(names.names[SpoolPlace(.sent, a)] == nil)
    }

    @Test func anUnchangedDeliveryIsLeftToBeFiled() throws {
        var (names, sent) = deliveredThenWritten(changed: false)
        let before = names.names
        #expect(try SpoolMoves.requeueIfChangedAfterUpload(a, manifest: sent, at: SpoolPlace(.sent, a), on: &names) == nil)
        #expect(names.names == before)
        #expect(names.performed == [.inspect(SpoolPlace(.sent, a))])
    }
}

/// A claim finding a `queued` record that came back from retry/ in a move back cut before its
/// record left retry/ (`SpoolMoves.finishCutMoveBack`).
@Suite struct CutMoveBackPlanTests {
    let a = RelativePath("a.bin")
    let naming = StoredAsNaming(prefixes: [.outbox: "outbox/", .sent: "sent/", .retry: "retry/"])

    /// `a.bin` back in the outbox with its `queued` record, whose name in retry/ is still there
    /// (and the file's too, when `fileStillInRetry`).
    func cutMoveBack(fileStillInRetry: Bool) -> (PlanNames, Manifest) {
        var names = PlanNames.fileInOutbox()
        var record = PlanNames.manifest(a, .queued)
        record.storedAs = "retry/a.bin"
        names.records[PlanNames.record] = record
        names.names[SpoolPlace(.retry, a, .record)] = PlanNames.record
        if fileStillInRetry { names.names[SpoolPlace(.retry, a)] = PlanNames.file }
        return (names, record)
    }

    @Test(arguments: [false, true])
    func theRecordLeavesRetryAfterTheFileDurably(fileStillInRetry: Bool) throws {
        var (names, record) = cutMoveBack(fileStillInRetry: fileStillInRetry)
        #expect(try SpoolMoves.finishCutMoveBack(a, manifest: record, file: PlanNames.file, naming: naming, on: &names))
        #expect(names.names == [SpoolPlace(.outbox, a): PlanNames.file, SpoolPlace(.outbox, a, .record): PlanNames.record])
        let recordGone = names.performed.firstIndex(of: .unlink(SpoolPlace(.retry, a, .record), move: 0))!
        let synced = names.performed.firstIndex(of: .syncDirectory(SpoolPlace(.retry, a), moves: [0]))!
        #expect(synced < recordGone, "the file's absence from retry/ is durable before its record goes")
        #expect(names.performed.last { if case .note = $0 { false } else { true } } == .syncDirectory(SpoolPlace(.retry, a), moves: [0]))
        #expect(names.notes.map(\.message) == ["finished an interrupted move back from retry/"])
    }

    @Test func aMoveBackThatLeftRetryWholeIsNoSuchMove() throws {
        var (names, record) = cutMoveBack(fileStillInRetry: false)
        names.names[SpoolPlace(.retry, a, .record)] = nil
        #expect(try !SpoolMoves.finishCutMoveBack(a, manifest: record, file: PlanNames.file, naming: naming, on: &names))
        #expect(!names.performed.contains { if case .unlink = $0 { true } else { false } })
    }

    @Test func anotherFileUnderTheNameInRetryIsLeftAlone() throws {
        var (names, record) = cutMoveBack(fileStillInRetry: true)
        names.names[SpoolPlace(.retry, a)] = PlanNames.another
        #expect(try !SpoolMoves.finishCutMoveBack(a, manifest: record, file: PlanNames.file, naming: naming, on: &names))
        #expect(names.names[SpoolPlace(.retry, a)] == PlanNames.another && names.names[SpoolPlace(.retry, a, .record)] == PlanNames.record)
    }

    @Test func aRefusedFsyncStopsThePlanWithTheRecordStillInRetry() {
        var (names, record) = cutMoveBack(fileStillInRetry: true)
        names.refuse = { step, _ in if case .syncDirectory = step { .other } else { nil } }
        #expect(throws: PlanStop.self) {
            try SpoolMoves.finishCutMoveBack(a, manifest: record, file: PlanNames.file, naming: naming, on: &names)
        }
        #expect(names.names[SpoolPlace(.retry, a, .record)] == PlanNames.record, "never the record before the file's absence is durable")
    }

    @Test func aRecordThatCameBackFromSentIsNoSuchMove() throws {
        var (names, record) = cutMoveBack(fileStillInRetry: false)
        record.storedAs = "sent/a.bin"
        #expect(try !SpoolMoves.finishCutMoveBack(a, manifest: record, file: PlanNames.file, naming: naming, on: &names))
    }
}
