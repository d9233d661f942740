import Testing
import UploaderDecisions
import UploaderValues

/// Retention's deletion of a delivered file (`SpoolMoves.retire`), as a table over names: what
/// keeps a file, and the order that never leaves a file in sent/ without its record.
@Suite struct RetirePlanTests {
    let a = RelativePath("a.bin")
    let naming = StoredAsNaming(prefixes: [.outbox: "outbox/", .sent: "sent/", .retry: "retry/"])

    /// `a.bin` and its `sent` record in sent/.
    func delivered() -> PlanNames {
        var names = PlanNames()
        names.names[SpoolPlace(.sent, a)] = PlanNames.file
        names.names[SpoolPlace(.sent, a, .record)] = PlanNames.record
        var record = PlanNames.manifest(a, .sent)
        record.storedAs = "sent/a.bin"
        names.records[PlanNames.record] = record
        return names
    }

    var unlinks: (PlanNames) -> [SpoolPlace] {
        { names in names.performed.compactMap { if case .unlink(let place, _) = $0 { place } else { nil } } }
    }

    @Test func theFileGoesDurablyBeforeItsRecord() throws {
        var names = delivered()
        #expect(try SpoolMoves.retire(a, naming: naming, on: &names) == .deleted)
        #expect(names.names.isEmpty)
        let tail = names.performed.suffix(3)
        #expect(Array(tail) == [.unlink(SpoolPlace(.sent, a), move: 0), .syncDirectory(SpoolPlace(.sent, a), moves: [0]),
                                .unlink(SpoolPlace(.sent, a, .record), move: 0)])
    }

    @Test func aRecordWhoseFileWentIsADeletionToFinish() throws {
        var names = delivered()
        names.names[SpoolPlace(.sent, a)] = nil
        #expect(try SpoolMoves.retire(a, naming: naming, on: &names) == .deleted)
        #expect(Array(names.performed.suffix(2)) == [.syncDirectory(SpoolPlace(.sent, a), moves: [0]), .unlink(SpoolPlace(.sent, a, .record), move: 0)])
    }

    @Test func aFileWhoseHookIsDueIsKept() throws {
        var names = delivered()
        names.hooksDue = [SpoolPlace(.sent, a)]
        #expect(try SpoolMoves.retire(a, naming: naming, on: &names) == .hookDue)
        #expect(unlinks(names).isEmpty)
    }

    @Test func aFileThatIsNotWhatWasSentIsKeptAndSaid() throws {
        var names = delivered()
        names.versions[PlanNames.file] = (7, "t0")
        #expect(try SpoolMoves.retire(a, naming: naming, on: &names) == .notWhatWasSent)
        #expect(unlinks(names).isEmpty)
        #expect(names.notes.map(\.values) == [["sent/a.bin", "size 1 → 7"]])
    }

    @Test func aMoveStillToBeFinishedKeepsItsNames() throws {
        var names = delivered()
        names.names[SpoolPlace(.outbox, a, .record)] = PlanNames.another
        names.records[PlanNames.another] = names.records[PlanNames.record]
        #expect(try SpoolMoves.retire(a, naming: naming, on: &names) == .moveUnfinished)
        #expect(unlinks(names).isEmpty)
    }

    @Test func aRefusedFsyncLeavesTheRecord() {
        var names = delivered()
        names.refuse = { step, _ in if case .syncDirectory = step { .other } else { nil } }
        #expect(throws: PlanStop.self) { try SpoolMoves.retire(a, naming: naming, on: &names) }
        #expect(names.names[SpoolPlace(.sent, a, .record)] == PlanNames.record)
    }
}
