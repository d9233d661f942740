import Testing
import UploaderDecisions
import UploaderValues

/// Start-up's decisions about a record in the outbox whose file is not beside it
/// (`SpoolMoves.settleOrphan`), as a table: what the crash left, what the plan makes of it.
@Suite struct OrphanRecordPlanTests {
    let a = RelativePath("a.bin")
    let naming = StoredAsNaming(prefixes: [.outbox: "outbox/", .sent: "sent/", .retry: "retry/"])

    /// The outbox holds `a.bin`'s record alone, in `state`, naming `area`; the file is where `fileIn` says.
    func orphan(_ state: Manifest.State, storedIn area: SpoolArea = .sent, fileIn: SpoolArea?) -> (PlanNames, Manifest) {
        var names = PlanNames()
        var record = PlanNames.manifest(a, state)
        record.storedAs = "\(area.rawValue)/a.bin"
        names.names[SpoolPlace(.outbox, a, .record)] = PlanNames.record
        names.records[PlanNames.record] = record
        if let fileIn { names.names[SpoolPlace(fileIn, a)] = PlanNames.file }
        return (names, record)
    }

    func settle(_ names: inout PlanNames, deletes: Bool = false) -> OrphanSettlement {
        SpoolMoves.settleOrphan(a, naming: naming, afterSendDeletes: deletes, on: &names)
    }

    @Test func noRecordIsNothingToDo() {
        var names = PlanNames()
        #expect(settle(&names) == .nothing)
        #expect(names.performed == [.readRecord(SpoolPlace(.outbox, a, .record))])
    }

    @Test func aNameEndingLikeARecordThatIsNoRecordIsLeftAlone() {
        var names = PlanNames()
        names.names[SpoolPlace(.outbox, a, .record)] = PlanNames.another
        #expect(settle(&names) == .nothing)
        #expect(names.names[SpoolPlace(.outbox, a, .record)] == PlanNames.another)
        #expect(names.notes.map(\.level) == [.debug])
    }

    @Test func aMoveCutAfterTheFilesLinkEndsWithTheRecordFollowingItsFile() {
        var (names, record) = orphan(.sent, fileIn: .sent)
        #expect(settle(&names) == .moved(SpoolPlace(.sent, a), record))
        #expect(names.names == [SpoolPlace(.sent, a): PlanNames.file, SpoolPlace(.sent, a, .record): PlanNames.record])
        #expect(names.notes.map(\.message) == ["paired a moved file with its manifest"])
    }

    /// Said as a move finished (`.moved`): a running daemon's rescan schedules the retry due, or
    /// queues the hook due, of a move it finished only from this (journalled seed 864 of a
    /// 2,000-seed run: a file finished into retry/ by a rescan was never tried again).
    @Test(arguments: [SpoolArea.sent, .retry])
    func aMoveCutBeforeItsLastStepDropsTheOutboxRecordOnceTheNewNamesAreDurable(area: SpoolArea) {
        var (names, record) = orphan(area == .sent ? .sent : .retry, storedIn: area, fileIn: area)
        names.names[SpoolPlace(area, a, .record)] = PlanNames.record
        #expect(settle(&names) == .moved(SpoolPlace(area, a), record))
        #expect(names.names[SpoolPlace(.outbox, a, .record)] == nil)
        let unlink = names.performed.firstIndex(of: .unlink(SpoolPlace(.outbox, a, .record), move: 0))!
        #expect(names.performed[..<unlink].contains(.syncDirectory(SpoolPlace(area, a), moves: [0])))
        #expect(names.performed[..<unlink].contains(.syncDirectory(SpoolPlace(.outbox, a), moves: [0])))
    }

    @Test func aRecordBesideAnotherRecordOfTheFileIsMovedAsideNeverDeleted() {
        var (names, _) = orphan(.sent, fileIn: .sent)
        names.names[SpoolPlace(.sent, a, .record)] = PlanNames.another
        #expect(settle(&names) == .nothing)
        #expect(names.names[SpoolPlace(.outbox, a, .record)] == nil)
        #expect(names.names.values.contains(PlanNames.record), "moved aside, not removed")
        #expect(names.notes.first?.message == "duplicate manifest; sent/a.bin already has one; manifest moved aside")
    }

    @Test func aMoveBackCutBeforeTheFilesLinkBringsTheFileToItsRecord() {
        var (names, _) = orphan(.queued, storedIn: .retry, fileIn: .retry)
        #expect(settle(&names) == .broughtBack(a, beside: nil))
        #expect(names.names[SpoolPlace(.outbox, a)] == PlanNames.file)
        #expect(names.names[SpoolPlace(.retry, a)] == nil)
    }

    @Test func aRecordWhoseFileIsNowhereIsMovedAside() {
        var (names, _) = orphan(.sent, fileIn: nil)
        #expect(settle(&names) == .nothing)
        #expect(names.names[SpoolPlace(.outbox, a, .record)] == nil)
        #expect(names.notes.map(\.message) == ["manifest with no file (the file vanished); manifest moved aside"])
    }

    @Test func aDeletionAfterSendCutBeforeTheRecordWentIsFinished() {
        var (names, _) = orphan(.sent, fileIn: nil)
        #expect(settle(&names, deletes: true) == .nothing)
        #expect(names.names.isEmpty)
        #expect(names.notes.map(\.message) == ["finished removing a delivered file (after_send = delete)"])
    }

    @Test func aDeliveryWrittenToAfterItsUploadComesBackToBeSentAgain() {
        var (names, _) = orphan(.sent, fileIn: .sent)
        names.names[SpoolPlace(.sent, a, .record)] = PlanNames.record
        names.versions[PlanNames.file] = (5, "t9")
        #expect(settle(&names) == .broughtBack(a, beside: nil))
        #expect(names.names[SpoolPlace(.outbox, a)] == PlanNames.file)
        #expect(names.names[SpoolPlace(.sent, a)] == nil)
        #expect(names.names[SpoolPlace(.outbox, a, .record)].flatMap { names.records[$0] }?.state == .queued)
    }
}
