import Testing
import UploaderDecisions
import UploaderValues

/// Whether a due hook waits for the move that filed its file (`SpoolMoves.moveUnfinished`), as a
/// table over names: it waits while the move's record is still in the outbox naming the file's
/// place and the outbox name leads to the file (or to none, or cannot be looked at); it runs once
/// the record is gone, names another place, or the name leads to another file.
@Suite struct HookWaitsForMovePlanTests {
    let a = RelativePath("a.bin")
    let naming = StoredAsNaming(prefixes: [.outbox: "outbox/", .sent: "sent/", .retry: "retry/"])
    var filed: SpoolPlace { SpoolPlace(.sent, a) }

    /// `a.bin` linked into sent/ with its record; the move's record still in the outbox (naming
    /// `stored`), the outbox name still leading to the file.
    func cutAfterTheLinks(stored: String = "sent/a.bin") -> (PlanNames, Manifest) {
        var names = PlanNames()
        names.names[SpoolPlace(.outbox, a)] = PlanNames.file
        names.names[filed] = PlanNames.file
        names.names[SpoolPlace(.outbox, a, .record)] = PlanNames.record
        names.names[SpoolPlace(.sent, a, .record)] = PlanNames.record
        var record = PlanNames.manifest(a, .sent)
        record.storedAs = stored
        names.records[PlanNames.record] = record
        return (names, record)
    }

    func waits(_ names: inout PlanNames, _ manifest: Manifest) -> Bool {
        SpoolMoves.moveUnfinished(filedAt: filed, manifest: manifest, naming: naming, on: &names)
    }

    @Test func whileTheMovesRecordAndNameAreInTheOutboxTheHookWaits() {
        var (names, manifest) = cutAfterTheLinks()
        #expect(waits(&names, manifest))
        // The outbox name already gone (the move cut between its unlinks): it still waits for its record.
        names.names[SpoolPlace(.outbox, a)] = nil
        #expect(waits(&names, manifest))
    }

    @Test func aNameThatCannotBeLookedAtCountsAsTheFilesAndTheHookWaits() {
        var (names, manifest) = cutAfterTheLinks()
        names.refuse = { step, _ in if case .lookUp(let place, _) = step, place.area == .outbox { .other } else { nil } }
        #expect(waits(&names, manifest))
    }

    @Test func anotherFileUnderTheOutboxNameLetsTheHookRun() {
        var (names, manifest) = cutAfterTheLinks()
        names.names[SpoolPlace(.outbox, a)] = PlanNames.another
        #expect(!waits(&names, manifest))
    }

    @Test func aFinishedMoveOrARecordOfAnotherPlaceLetsTheHookRun() {
        var (names, manifest) = cutAfterTheLinks()
        names.names[SpoolPlace(.outbox, a, .record)] = nil
        #expect(!waits(&names, manifest))
        var (elsewhere, record) = cutAfterTheLinks(stored: "retry/a.bin")
        #expect(!waits(&elsewhere, record))
    }

    @Test func anOutboxRecordThatCannotBeReadCountsAsNone() {
        var (names, manifest) = cutAfterTheLinks()
        names.refuse = { step, _ in if case .readRecord = step { .other } else { nil } }
        #expect(!waits(&names, manifest))
    }
}
