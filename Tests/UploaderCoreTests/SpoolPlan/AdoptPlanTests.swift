import Testing
import UploaderDecisions
import UploaderValues

/// Another user's file made ours before its claim (`SpoolMoves.adopt`, `reconcileAdoption`), as a
/// table over names: a producer that writes on, replaces the file, or was cut by a crash never
/// loses bytes, and the outbox name ends on the newest ones.
@Suite struct AdoptPlanTests {
    let a = RelativePath("a.bin")
    var named: SpoolPlace { SpoolPlace(.outbox, a) }
    var aside: SpoolPlace { SpoolPlace(.outbox, SpoolPlace.adoptionLeftover(of: a)) }
    var heldFacts: FileFacts { FileFacts(identity: PlanNames.file, size: 1, mtime: "t0", mtimeNanos: 0) }

    /// A producer's `a.bin` in the outbox, held open by the claim, not ours to link.
    func theirs() -> PlanNames {
        var names = PlanNames()
        names.names[named] = PlanNames.file
        names.held = PlanNames.file
        names.theirs = [PlanNames.file]
        return names
    }

    @Test func aFileWeMayLinkIsLeftAsItIs() throws {
        var names = theirs()
        names.theirs = []
        #expect(try SpoolMoves.adopt(a, held: heldFacts, writtenJustBefore: false, on: &names) == .notNeeded)
        #expect(names.names == [named: PlanNames.file])
    }

    @Test func theCopyTakesTheNameAndTheOriginalWaitsBesideIt() throws {
        var names = theirs()
        let outcome = try SpoolMoves.adopt(a, held: heldFacts, writtenJustBefore: false, on: &names)
        let copy = try #require(names.names[named])
        #expect(outcome == .adopted(copy: copy, original: heldFacts))
        #expect(copy != PlanNames.file && names.names[aside] == PlanNames.file)
        let swap = names.performed.firstIndex(of: .exchange(aside, named))!
        let sync = names.performed.firstIndex(of: .syncDirectory(named, moves: [0]))!
        #expect(swap < sync, "the swap is durable before the claim goes on (the id derives from the inode)")
    }

    @Test func aWriteSeenBeforeTheSwapDropsTheCopy() throws {
        var names = theirs()
        names.heldNow = (2, "t1")
        #expect(try SpoolMoves.adopt(a, held: heldFacts, writtenJustBefore: false, on: &names) == .changed)
        #expect(names.names == [named: PlanNames.file])
    }

    @Test func aFileReplacedBetweenTheLookAndTheSwapKeepsItsName() throws {
        var names = theirs()
        let swap = DiskStep.exchange(aside, named)
        names.meanwhile = { step, names in if step == swap, names[SpoolPlace(.outbox, RelativePath("a.bin"))] == PlanNames.file {
            names[SpoolPlace(.outbox, RelativePath("a.bin"))] = PlanNames.another
        } }
        #expect(try SpoolMoves.adopt(a, held: heldFacts, writtenJustBefore: false, on: &names) == .changed)
        #expect(names.names == [named: PlanNames.another], "the producer's new file has the name, our copy is gone")
    }

    @Test func aRewriteWithinOneTickIsToldByItsBytes() throws {
        var names = theirs()
        names.rewritten = [PlanNames.file]
        #expect(try SpoolMoves.adopt(a, held: heldFacts, writtenJustBefore: true, on: &names) == .changed)
        #expect(names.names == [named: PlanNames.file])
        var unhurried = theirs()
        unhurried.rewritten = [PlanNames.file]
        #expect(try SpoolMoves.adopt(a, held: heldFacts, writtenJustBefore: false, on: &unhurried) != .changed, "bytes compared only within one tick")
    }

    let copy = FileIdentity(device: 1, inode: 77)

    /// Our copy under the outbox name, the producer's original beside it (an adoption done).
    func adopted() -> PlanNames {
        var names = PlanNames()
        names.names[named] = copy
        names.names[aside] = PlanNames.file
        names.theirs = [PlanNames.file]
        return names
    }

    @Test func ourCopyClaimedAgainKeepsItsOriginalBeside() throws {
        var names = adopted()
        names.held = copy
        let held = FileFacts(identity: copy, size: 1, mtime: "t0", mtimeNanos: 0)
        #expect(try SpoolMoves.adopt(a, held: held, writtenJustBefore: false, on: &names)
                == .copiedBefore(original: FileFacts(identity: PlanNames.file, size: 1, mtime: "t0", mtimeNanos: 0)))
        #expect(names.names == [named: copy, aside: PlanNames.file])
    }

    @Test func anOriginalWrittenToAfterItsCopyTakesItsNameBack() throws {
        var names = adopted()
        names.versions[PlanNames.file] = (5, "t9")
        try SpoolMoves.reconcileAdoption(a, on: &names)
        #expect(names.names == [named: PlanNames.file])
    }

    @Test func anOriginalWhoseCopyWasFiledGoes() throws {
        var names = PlanNames()
        names.names[aside] = PlanNames.file
        names.theirs = [PlanNames.file]
        try SpoolMoves.reconcileAdoption(a, on: &names)
        #expect(names.names.isEmpty)
        #expect(names.performed.last == .syncDirectory(named, moves: [0]))
    }

    @Test func anOriginalIsKeptWhenTheNameCannotBeLookedAt() {
        var names = PlanNames()
        names.names[aside] = PlanNames.file
        names.names[named] = copy
        names.theirs = [PlanNames.file]
        names.refuse = { step, _ in if case .inspect(let place) = step, place.path == RelativePath("a.bin") { .other } else { nil } }
        #expect(throws: PlanStop.self) { try SpoolMoves.reconcileAdoption(a, on: &names) }
        #expect(names.names[aside] == PlanNames.file)
    }
}
