import Testing
import UploaderDecisions
import UploaderValues

/// The decisions of a batch of moves (`MoveBatchPlan`), as a table: the names the spool holds,
/// what the disk refuses or others change meanwhile, and the steps the plan takes and its results.
@Suite struct MoveBatchPlanTests {
    let a = RelativePath("a.bin")

    func delivery(_ path: RelativePath, live: Bool = true, recordFirst: Bool = true, held: FileIdentity? = nil) -> PlannedMove {
        PlannedMove(path: path, manifest: PlanNames.manifest(path, .sent), area: .sent, target: path, live: live,
                    recordFirst: recordFirst, heldFile: held)
    }

    @Test func aDeliveryTakesTheContractsStepsInOrder() {
        var names = PlanNames.fileInOutbox()
        var plan = MoveBatchPlan([delivery(a)])
        #expect(names.run(&plan) == [.moved(fileHere: true)])
        let outbox = SpoolPlace(.outbox, a), sent = SpoolPlace(.sent, a)
        #expect(names.performed == [
            .syncDirectory(outbox, moves: [0]),
            .lookUp(outbox, move: 0),
            .link(outbox, to: sent, move: 0),
            .link(outbox.record, to: sent.record, move: 0),
            .syncDirectory(sent, moves: [0]),
            .recordDeliveries([PlanNames.manifest(a, .sent)], moves: [0]),
            .lookUp(outbox, move: 0),
            .unlink(outbox, move: 0),
            .syncDirectory(outbox, moves: [0]),
        ])
        // Step 5 (the record's outbox name) is the end plan's.
        #expect(names.names == [sent: PlanNames.file, sent.record: PlanNames.record, outbox.record: PlanNames.record])
    }

    @Test func movesThatFinishTogetherShareEachDirectorysFsync() {
        var names = PlanNames()
        let paths = ["a", "b", "c"].map { RelativePath($0) }
        for (n, path) in paths.enumerated() {
            names.names[SpoolPlace(.outbox, path)] = FileIdentity(device: 1, inode: UInt64(100 + n))
            names.names[SpoolPlace(.outbox, path, .record)] = FileIdentity(device: 1, inode: UInt64(200 + n))
        }
        var plan = MoveBatchPlan(paths.map { delivery($0) })
        #expect(names.run(&plan) == Array(repeating: .moved(fileHere: true), count: 3))
        let syncs = names.performed.filter { if case .syncDirectory = $0 { true } else { false } }
        #expect(syncs.map(\.moves) == [[0, 1, 2], [0, 1, 2], [0, 1, 2]])
        #expect(names.performed.filter { if case .recordDeliveries = $0 { true } else { false } } .map(\.moves) == [[0, 1, 2]])
    }

    @Test func aTargetNameHoldingAnotherFileIsTakenNeverOverwritten() {
        var names = PlanNames.fileInOutbox()
        names.names[SpoolPlace(.sent, a)] = PlanNames.another
        var plan = MoveBatchPlan([delivery(a)])
        #expect(names.run(&plan) == [.failed(.targetTaken(a))])
        #expect(names.names[SpoolPlace(.outbox, a)] == PlanNames.file)
        #expect(names.names[SpoolPlace(.sent, a)] == PlanNames.another)
        #expect(!names.performed.contains { if case .unlink = $0 { true } else { false } })
    }

    @Test func aMoveRunAgainCountsTheNamesThatLeadToItsFileAsMadeAndAddsNoLedgerLine() {
        var names = PlanNames.fileInOutbox()
        names.names[SpoolPlace(.sent, a)] = PlanNames.file
        names.names[SpoolPlace(.sent, a, .record)] = PlanNames.record
        var plan = MoveBatchPlan([delivery(a, live: false, recordFirst: false)])
        #expect(names.run(&plan) == [.moved(fileHere: true)])
        #expect(!names.performed.contains { if case .recordDeliveries = $0 { true } else { false } })
        #expect(names.names[SpoolPlace(.outbox, a)] == nil)
    }

    @Test func anotherUsersFileIsRenamedAndLeavesNoOutboxNameToUnlink() {
        var names = PlanNames.fileInOutbox()
        names.refuse = { step, _ in
            if case .link(let from, _, _) = step, from.kind == .file { return .notPermitted }
            return nil
        }
        var plan = MoveBatchPlan([delivery(a)])
        #expect(names.run(&plan) == [.moved(fileHere: true)])
        #expect(names.performed.contains(.rename(SpoolPlace(.outbox, a), to: SpoolPlace(.sent, a), move: 0)))
        #expect(!names.performed.contains { if case .unlink = $0 { true } else { false } })
        #expect(names.names[SpoolPlace(.sent, a)] == PlanNames.file)
    }

    @Test func aLiveMoveOfAFileItsProducerTookAwayFilesNothing() {
        var names = PlanNames.fileInOutbox()
        names.names[SpoolPlace(.outbox, a)] = nil
        var plan = MoveBatchPlan([delivery(a)])
        #expect(names.run(&plan) == [.failed(.removedFromOutbox)])
        #expect(!names.performed.contains { if case .link = $0 { true } else { false } })
    }

    @Test func aLiveMoveWhoseNameLeadsToAnotherFileThanTheOneHeldFilesNothing() {
        var names = PlanNames.fileInOutbox()
        names.names[SpoolPlace(.outbox, a)] = PlanNames.another
        var plan = MoveBatchPlan([delivery(a, held: PlanNames.file)])
        #expect(names.run(&plan) == [.failed(.removedFromOutbox)])
        #expect(names.names[SpoolPlace(.outbox, a)] == PlanNames.another)
    }

    @Test func recoveryFinishesAMoveWhoseFileHasAlreadyLeftTheOutbox() {
        var names = PlanNames.fileInOutbox()
        names.names[SpoolPlace(.outbox, a)] = nil
        names.names[SpoolPlace(.sent, a)] = PlanNames.file
        var plan = MoveBatchPlan([delivery(a, live: false, recordFirst: false)])
        #expect(names.run(&plan) == [.moved(fileHere: false)])
        #expect(names.names[SpoolPlace(.sent, a, .record)] == PlanNames.record)
        #expect(!names.performed.contains { if case .unlink = $0 { true } else { false } })
    }

    @Test func recoveryOfAMoveWhoseFileIsNowhereFilesNothing() {
        var names = PlanNames.fileInOutbox()
        names.names[SpoolPlace(.outbox, a)] = nil
        var plan = MoveBatchPlan([delivery(a, live: false, recordFirst: false)])
        #expect(names.run(&plan) == [.failed(.removedFromOutbox)])
        #expect(names.names[SpoolPlace(.sent, a, .record)] == nil)
    }

    @Test func aRefusedDirectoryFsyncStopsOnlyTheMovesItServed() {
        let sub = RelativePath("d/b.bin")
        var names = PlanNames.fileInOutbox()
        names.names[SpoolPlace(.outbox, sub)] = PlanNames.another
        names.names[SpoolPlace(.outbox, sub, .record)] = FileIdentity(device: 1, inode: 98)
        names.refuse = { step, _ in
            if case .syncDirectory(let place, _) = step, place.area == .outbox, place.path.parent != nil { return .other }
            return nil
        }
        var plan = MoveBatchPlan([delivery(a), delivery(sub)])
        #expect(names.run(&plan) == [.moved(fileHere: true), .failed(.refused)])
        #expect(names.names[SpoolPlace(.outbox, sub)] == PlanNames.another)
        #expect(names.names[SpoolPlace(.sent, sub)] == nil)
    }

    @Test func aNewFileTheProducerPutUnderTheNameBeforeTheUnlinkKeepsIt() {
        var names = PlanNames.fileInOutbox()
        names.meanwhile = { step, names in
            if case .recordDeliveries = step { names[SpoolPlace(.outbox, RelativePath("a.bin"))] = PlanNames.another }
        }
        var plan = MoveBatchPlan([delivery(a)])
        #expect(names.run(&plan) == [.moved(fileHere: true)])
        #expect(names.names[SpoolPlace(.outbox, a)] == PlanNames.another)
        #expect(names.names[SpoolPlace(.sent, a)] == PlanNames.file)
    }

    @Test func aNameFreedRightAfterRefusingTheLinkIsLinkedAgain() {
        var names = PlanNames.fileInOutbox()
        var refused = false
        names.refuse = { step, _ in
            if case .link(let from, _, _) = step, from.kind == .file, !refused { return .exists }
            return nil
        }
        names.meanwhile = { step, _ in if case .lookUp(let place, _) = step, place.area == .sent { refused = true } }
        var plan = MoveBatchPlan([delivery(a)])
        #expect(names.run(&plan) == [.moved(fileHere: true)])
        #expect(names.names[SpoolPlace(.sent, a)] == PlanNames.file)
    }

    @Test func aHookDueGetsItsMarkerBeforeTheRecordMoves() {
        var names = PlanNames.fileInOutbox()
        var move = delivery(a)
        move.manifest.hooks = [Manifest.HookRun(name: "on_sent", startedAt: "t0")]
        #expect(move.hookDue)
        var plan = MoveBatchPlan([move])
        #expect(names.run(&plan) == [.moved(fileHere: true)])
        let marker = names.performed.firstIndex(of: .markHookDue(move.manifest, at: SpoolPlace(.sent, a), move: 0))
        let recordLink = names.performed.firstIndex(of: .link(SpoolPlace(.outbox, a, .record), to: SpoolPlace(.sent, a, .record), move: 0))
        #expect(marker != nil && recordLink != nil && marker! < recordLink!)
    }
}

/// The decisions of a move's last step (`MoveEndPlan`).
@Suite struct MoveEndPlanTests {
    let a = RelativePath("a.bin")

    func movedToSent() -> PlanNames {
        var names = PlanNames()
        names.names[SpoolPlace(.sent, a)] = PlanNames.file
        names.names[SpoolPlace(.sent, a, .record)] = PlanNames.record
        names.names[SpoolPlace(.outbox, a, .record)] = PlanNames.record
        return names
    }

    @Test func aMoveEndsWithItsRecordsOutboxNameAlone() {
        var names = movedToSent()
        var plan = MoveEndPlan(path: a, area: .sent, target: a, deletesAfter: false, namesMayBeUnsynced: false)
        #expect(names.run(&plan) == nil)
        #expect(names.performed == [.unlink(SpoolPlace(.outbox, a, .record), move: 0)])
    }

    @Test func aDeletionAfterSendIsDurableBeforeTheOutboxRecordGoes() {
        var names = movedToSent()
        var plan = MoveEndPlan(path: a, area: .sent, target: a, deletesAfter: true, namesMayBeUnsynced: false)
        #expect(names.run(&plan) == nil)
        let sent = SpoolPlace(.sent, a)
        #expect(names.performed == [
            .lookUp(sent, move: 0), .unlink(sent, move: 0), .syncDirectory(sent, moves: [0]),
            .lookUp(sent.record, move: 0), .unlink(sent.record, move: 0), .syncDirectory(sent, moves: [0]),
            .unlink(SpoolPlace(.outbox, a, .record), move: 0),
        ])
        #expect(names.names.isEmpty)
    }

    @Test func recoveryMakesTheNewNamesAndTheFilesRemovalDurableFirst() {
        var names = movedToSent()
        var plan = MoveEndPlan(path: a, area: .sent, target: a, deletesAfter: false, namesMayBeUnsynced: true)
        #expect(names.run(&plan) == nil)
        #expect(Array(names.performed.prefix(2)) == [.syncDirectory(SpoolPlace(.sent, a), moves: [0]),
                                                      .syncDirectory(SpoolPlace(.outbox, a), moves: [0])])
    }

    @Test func aLiveEndWhoseRecordARescanAlreadyDroppedIsDoneButRecoverysIsRefused() {
        var names = movedToSent()
        names.names[SpoolPlace(.outbox, a, .record)] = nil
        var live = MoveEndPlan(path: a, area: .sent, target: a, deletesAfter: false, namesMayBeUnsynced: false)
        #expect(names.run(&live) == nil)
        var recovery = MoveEndPlan(path: a, area: .sent, target: a, deletesAfter: false, namesMayBeUnsynced: true)
        #expect(names.run(&recovery) == .refused)
    }
}
