import Testing
import UploaderDecisions
import UploaderValues

/// A claim finding a record in a final state beside its file (`SpoolMoves.finishRecorded`).
@Suite struct FinishRecordedPlanTests {
    let a = RelativePath("a.bin")
    let naming = StoredAsNaming(prefixes: [.outbox: "outbox/", .sent: "sent/", .retry: "retry/"])

    /// `a.bin` in the outbox, held open by the claim, beside a `sent` record naming sent/a.bin.
    func recordedDelivery() -> (PlanNames, Manifest) {
        var names = PlanNames.fileInOutbox()
        var record = PlanNames.manifest(a, .sent)
        record.storedAs = "sent/a.bin"
        names.records[PlanNames.record] = record
        names.held = PlanNames.file
        return (names, record)
    }

    @Test func aCutDeliveryIsFiledUnderTheNameItsRecordGives() throws {
        var (names, record) = recordedDelivery()
        let placed = try SpoolMoves.finishRecorded(a, manifest: record, file: PlanNames.file, naming: naming, afterSendDeletes: false,
                                                   on: &names)
        #expect(placed == SpoolPlace(.sent, a))
        #expect(names.names == [SpoolPlace(.sent, a): PlanNames.file, SpoolPlace(.sent, a, .record): PlanNames.record])
        #expect(!names.performed.contains { if case .writeRecord = $0 { true } else { false } }, "the record already names its place")
    }

    @Test func aNameTakenByAnotherFileGetsTheRecordRewrittenFirst() throws {
        var (names, record) = recordedDelivery()
        names.names[SpoolPlace(.sent, a)] = PlanNames.another
        let placed = try SpoolMoves.finishRecorded(a, manifest: record, file: PlanNames.file, naming: naming, afterSendDeletes: false,
                                                   on: &names)
        #expect(placed == SpoolPlace(.sent, RelativePath("a.2.bin")))
        let write = names.performed.firstIndex { if case .writeRecord = $0 { true } else { false } }!
        let link = names.performed.firstIndex { if case .link = $0 { true } else { false } }!
        #expect(write < link)
        #expect(names.names[SpoolPlace(.sent, a)] == PlanNames.another)
    }

    @Test func aDeliveryWrittenToInPlaceGoesBackAndIsNeverFiledAsSent() {
        var (names, record) = recordedDelivery()
        names.versions[PlanNames.file] = (9, "t5")
        #expect(throws: PlanStop.changedDuringMove("modified", broughtBackAs: nil)) {
            try SpoolMoves.finishRecorded(a, manifest: record, file: PlanNames.file, naming: naming, afterSendDeletes: false, on: &names)
        }
        #expect(names.names[SpoolPlace(.outbox, a)] == PlanNames.file)
        #expect(names.names[SpoolPlace(.sent, a)] == nil && names.names[SpoolPlace(.sent, a, .record)] == nil)
    }
}
