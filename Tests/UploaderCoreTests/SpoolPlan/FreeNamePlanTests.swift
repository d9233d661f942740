import Testing
import UploaderDecisions
import UploaderValues

/// The choice of a name (`SpoolMoves.freeName`, `besideName`), as a table over names.
@Suite struct FreeNamePlanTests {
    let a = RelativePath("a.bin")

    @Test func aNameWithAFileARecordOrAWaitingOriginalIsTaken() throws {
        var names = PlanNames()
        names.names[SpoolPlace(.outbox, a)] = PlanNames.file
        names.names[SpoolPlace(.outbox, RelativePath("a.2.bin"), .record)] = PlanNames.record
        names.names[SpoolPlace(.outbox, SpoolPlace.adoptionLeftover(of: RelativePath("a.3.bin")))] = PlanNames.another
        #expect(try SpoolMoves.freeName(SpoolPlace(.outbox, a), on: &names) == RelativePath("a.4.bin"))
        // In sent/ no adoption waits: a hidden name there is no reason to pass a name over.
        names.names[SpoolPlace(.sent, SpoolPlace.adoptionLeftover(of: a))] = PlanNames.another
        #expect(try SpoolMoves.freeName(SpoolPlace(.sent, a), on: &names) == a)
    }

    @Test func aNameThatCannotBeLookedAtStopsTheSearch() {
        var names = PlanNames()
        names.names[SpoolPlace(.outbox, a)] = PlanNames.file
        names.refuse = { step, _ in if case .lookUp(let place, _) = step, place.path == RelativePath("a.2.bin") { .other } else { nil } }
        #expect(throws: PlanStop.refused(.other)) { try SpoolMoves.freeName(SpoolPlace(.outbox, a), on: &names) }
    }

    @Test func aFileComingBackTakesTheNameThatAlreadyLeadsToIt() throws {
        var names = PlanNames()
        names.names[SpoolPlace(.sent, a)] = PlanNames.file
        names.names[SpoolPlace(.outbox, a)] = PlanNames.another
        names.names[SpoolPlace(.outbox, RelativePath("a.2.bin"))] = PlanNames.file
        #expect(try SpoolMoves.besideName(a, bringingBack: SpoolPlace(.sent, a), on: &names) == RelativePath("a.2.bin"))
        names.names[SpoolPlace(.outbox, RelativePath("a.2.bin"), .record)] = PlanNames.record
        #expect(try SpoolMoves.besideName(a, bringingBack: SpoolPlace(.sent, a), on: &names) == RelativePath("a.3.bin"),
                "a name with a record of its own is not this file's")
    }
}
