import Foundation
import Testing
import UploaderDecisions
import UploaderValues

/// What start-up makes of a marker in `.hooks-due/` (`HookMarkerFate.judge`), as a table: a hook
/// due runs, a delivery still to remove with `after_send = delete` runs, a finished run drops the
/// marker, a gone manifest drops it once that is durable, and an unreadable one keeps it.
@Suite struct HookMarkerFateTests {
    static func manifest(_ state: Manifest.State, hook: HookStage) -> Manifest {
        var m = PlanNames.manifest(RelativePath("a.bin"), state)
        switch hook {
        case .none: break
        case .due: m.markHookDue()
        case .finished:
            m.markHookDue()
            let name = Manifest.hookName(for: state) ?? "on_sent"
            m.recordHookStart(name, at: Date(timeIntervalSince1970: 1))
            m.recordHookEnd(name, at: Date(timeIntervalSince1970: 2), exitStatus: 0)
        }
        return m
    }

    enum HookStage { case none, due, finished }

    func judge(_ record: RecordRead, hook: String = "on_sent", area: SpoolArea = .sent, deletes: Bool = false) -> HookMarkerFate {
        HookMarkerFate.judge(hook: hook, area: area, record: record, afterSendDeletes: deletes) { $1.dueHook == $0 }
    }

    @Test func aHookDueRunsWhateverAfterSendSays() {
        let due = Self.manifest(.sent, hook: .due)
        #expect(judge(.parsed(due)) == .run)
        #expect(judge(.parsed(due), deletes: true) == .run)
        #expect(judge(.parsed(Self.manifest(.failed, hook: .due)), hook: "on_failed", area: .retry) == .run)
    }

    @Test func aFinishedRunDropsTheMarkerUnlessADeliveryWaitsToBeRemoved() {
        let finished = Self.manifest(.sent, hook: .finished)
        #expect(judge(.parsed(finished)) == .drop)
        #expect(judge(.parsed(finished), deletes: true) == .run)
        // after_send = delete removes deliveries only: a failed file's finished run is done.
        #expect(judge(.parsed(Self.manifest(.failed, hook: .finished)), hook: "on_failed", area: .retry, deletes: true) == .drop)
    }

    @Test func aMarkerOfAnotherHookThanTheOneDueIsDropped() {
        #expect(judge(.parsed(Self.manifest(.sent, hook: .due)), hook: "on_failed") == .drop)
        #expect(judge(.parsed(Self.manifest(.queued, hook: .none))) == .drop)
    }

    @Test func aManifestGoneDropsTheMarkerOnlyOnceItsAbsenceIsDurable() {
        #expect(judge(.missing) == .dropOnceAbsenceIsDurable)
        #expect(judge(.missing, deletes: true) == .dropOnceAbsenceIsDurable)
        #expect(judge(.missing, hook: "on_failed", area: .retry) == .dropOnceAbsenceIsDurable)
    }

    @Test func aManifestThatCannotBeReadKeepsTheMarkerAndRunsNothing() {
        #expect(judge(.unreadable) == .keepUnread)
        #expect(judge(.corrupt, deletes: true) == .keepUnread)
    }
}
