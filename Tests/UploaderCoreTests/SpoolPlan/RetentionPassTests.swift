import Testing
import UploaderDecisions
import UploaderValues

/// Which files one pass over sent/ deletes (`RetentionPass`), as a table: what is too old or
/// half deleted goes as it is met, the size bound takes the oldest first until sent/ fits, and a
/// window too small for what must go asks for another walk.
@Suite struct RetentionPassTests {
    static func record(_ n: Int) -> RelativePath { RelativePath("f\(n).bin.manifest.json") }

    /// Meets `weights` (bytes, mtime in seconds) in the order given; returns the pass.
    static func walk(keepBytes: Int64, window: Int, _ weights: [(Int64, Int64)]) -> RetentionPass {
        var pass = RetentionPass(keepBytes: keepBytes, window: window)
        for (n, (bytes, seconds)) in weights.enumerated() {
            let deleteNow = pass.met(record(n), .weigh(bytes: bytes, mtimeNanos: seconds * 1_000_000_000))
            #expect(!deleteNow)
        }
        return pass
    }

    /// Deletes, oldest first, while the pass is beyond its bound; returns the records deleted.
    static func deleteForTheBound(_ pass: inout RetentionPass, refusing refused: Set<RelativePath> = []) -> [RelativePath] {
        var deleted: [RelativePath] = []
        for candidate in pass.oldestFirst() where pass.beyondBound && !refused.contains(candidate.manifest) {
            pass.deleted(candidate)
            deleted.append(candidate.manifest)
        }
        return deleted
    }

    @Test func whatIsTooOldOrHalfDeletedGoesAsItIsMetAndIsNotWeighed() {
        var pass = RetentionPass(keepBytes: 100, window: 4)
        let met = [pass.met(Self.record(0), .tooOld), pass.met(Self.record(1), .finishDeletion),
                   pass.met(Self.record(2), .keep), pass.met(Self.record(3), .gone)]
        #expect(met == [true, true, false, false])
        #expect(pass.weighed == 0 && !pass.beyondBound && pass.oldestFirst().isEmpty)
    }

    @Test func withinTheBoundNothingGoes() {
        var pass = Self.walk(keepBytes: 300, window: 4, [(100, 5), (100, 1), (100, 3)])
        #expect(!pass.beyondBound)
        #expect(Self.deleteForTheBound(&pass) == [])
        #expect(!pass.walkAgain)
    }

    @Test func beyondTheBoundTheOldestGoFirstUntilSentFits() {
        var pass = Self.walk(keepBytes: 250, window: 4, [(100, 5), (100, 1), (100, 3), (100, 9)])
        #expect(Self.deleteForTheBound(&pass) == [Self.record(1), Self.record(2)])
        #expect(pass.weighed == 200 && !pass.beyondBound && !pass.walkAgain)
    }

    @Test func equalAgesGoInTheOrderOfTheirPaths() {
        var pass = Self.walk(keepBytes: 100, window: 4, [(100, 7), (100, 7), (100, 7)])
        #expect(Self.deleteForTheBound(&pass) == [Self.record(0), Self.record(1)])
    }

    @Test func aFileThatCannotBeDeletedLeavesItsBytesCountedAndTheNextOldestGoes() {
        var pass = Self.walk(keepBytes: 250, window: 4, [(100, 5), (100, 1), (100, 3), (100, 9)])
        #expect(Self.deleteForTheBound(&pass, refusing: [Self.record(1)]) == [Self.record(2), Self.record(0)])
        #expect(!pass.beyondBound)
    }

    @Test func aWindowTooSmallForWhatMustGoAsksForAnotherWalk() {
        // Five files of 100 bytes, a bound of 100: four must go, the window holds two.
        var pass = Self.walk(keepBytes: 100, window: 2, [(100, 5), (100, 1), (100, 4), (100, 2), (100, 3)])
        #expect(Self.deleteForTheBound(&pass) == [Self.record(1), Self.record(3)])
        #expect(pass.beyondBound && pass.walkAgain)
        // A window that held everything it met, still beyond the bound (deletions refused): no walk again.
        var whole = Self.walk(keepBytes: 100, window: 8, [(100, 5), (100, 1)])
        #expect(Self.deleteForTheBound(&whole, refusing: [Self.record(0), Self.record(1)]) == [])
        #expect(whole.beyondBound && !whole.walkAgain)
    }
}
