import Foundation
import Testing
import UploaderDecisions
import UploaderValues

/// What a pass over sent/ makes of one record it meets (`SpoolMoves.judgeSent`), as a table: its
/// age against `keep_sent`, its weight for `keep_sent_bytes`, a deletion to finish, and a look the
/// disk refuses, which keeps the file.
@Suite struct JudgeSentPlanTests {
    let a = RelativePath("a.bin")
    /// The record's mtime: 100 s after the epoch (PlanNames reads "t" and nanoseconds).
    static let recordMtime = "t100000000000"

    /// `a.bin` (7 bytes) and its record (300 bytes, written at 100 s) in sent/.
    func delivered() -> PlanNames {
        var names = PlanNames()
        names.names[SpoolPlace(.sent, a)] = PlanNames.file
        names.names[SpoolPlace(.sent, a, .record)] = PlanNames.record
        names.versions[PlanNames.file] = (7, "t0")
        names.versions[PlanNames.record] = (300, Self.recordMtime)
        return names
    }

    func judge(_ names: inout PlanNames, keep: Double = 0, keepBytes: Int64 = 0, at seconds: Double) throws(PlanStop) -> SentJudgement {
        try SpoolMoves.judgeSent(a, rule: RetentionRule(keep: keep, keepBytes: keepBytes), now: Date(timeIntervalSince1970: seconds), on: &names)
    }

    @Test func aRecordOlderThanKeepSentIsToDeleteAndOneAsOldIsNot() throws {
        var names = delivered()
        #expect(try judge(&names, keep: 60, at: 160.5) == .tooOld)
        #expect(try judge(&names, keep: 60, at: 160) == .keep)
        #expect(try judge(&names, keep: 60, at: 100) == .keep)
    }

    @Test func underASizeBoundAFileIsWeighedWithItsRecordByItsRecordsAge() throws {
        var names = delivered()
        #expect(try judge(&names, keep: 60, keepBytes: 1_000, at: 120) == .weigh(bytes: 307, mtimeNanos: 100_000_000_000))
        #expect(try judge(&names, keepBytes: 1_000, at: 1_000_000) == .weigh(bytes: 307, mtimeNanos: 100_000_000_000))
        // Too old goes whatever the size bound.
        #expect(try judge(&names, keep: 60, keepBytes: 1_000, at: 200) == .tooOld)
    }

    @Test func aRecordWithoutItsFileIsADeletionToFinishWhateverTheBounds() throws {
        var names = delivered()
        names.names[SpoolPlace(.sent, a)] = nil
        #expect(try judge(&names, keep: 3_600, at: 101) == .finishDeletion)
        #expect(try judge(&names, keepBytes: 1 << 40, at: 101) == .finishDeletion)
    }

    @Test func aRecordGoneSinceTheListingIsNothingToJudge() throws {
        var names = delivered()
        names.names[SpoolPlace(.sent, a, .record)] = nil
        #expect(try judge(&names, keep: 1, at: 1_000) == .gone)
    }

    @Test(arguments: [SpoolPlace.Kind.record, .file])
    func aLookTheDiskRefusesStopsTheJudgementAndChangesNothing(refused: SpoolPlace.Kind) {
        var names = delivered()
        names.refuse = { step, _ in if case .inspect(let place) = step, place.kind == refused { .other } else { nil } }
        #expect(throws: PlanStop.self) { try judge(&names, keep: 1, at: 1_000) }
        #expect(names.performed.allSatisfy { if case .inspect = $0 { true } else { false } }, "only looks: \(names.performed)")
    }
}
