@preconcurrency import Glibc
import Foundation
import Synchronization
import Testing
@testable import UploaderSupport
@testable import UploaderSpool

/// The spool lock this process let go of may still be held, for an instant, by a child being
/// spawned (between its clone and its exec it shares every open file of ours): a reload must
/// take it once the child lets go, and only another process's lock is refused at once.
@Suite struct SpoolLockTests {
    /// Takes the lock on another thread; returns what it got once that thread is done.
    private final class Taker: Sendable {
        private let result = Mutex<Result<SpoolLock, Error>?>(nil)
        private let done = Latch()

        init(root: String, clock: ManualClock) {
            Thread { [self] in
                let outcome = Result { try SpoolLock(LocalFileSystem(), root: root, clock: clock) }
                result.withLock { $0 = outcome }
                done.open()
            }.start()
        }

        var finished: Bool { done.isOpen }
        var outcome: Result<SpoolLock, Error>? { result.withLock { $0 } }
    }

    @Test func aLockOfOursStillSharedWithAChildBeingSpawnedIsTakenOnceTheChildLetsGo() throws {
        let dir = try TemporaryDirectory()
        var first: SpoolLock? = try SpoolLock(LocalFileSystem(), root: dir.path)
        // Stands for the child between its clone and its exec: the same open file, and so the lock.
        let child = dup((first!.held as! HeldLockFile<KernelCalls>).number.rawValue)
        first = nil
        let clock = ManualClock()
        let taker = Taker(root: dir.path, clock: clock)
        ClockWaitTests.eventually("the new lock to wait on the clock") { clock.waiting == 1 }
        #expect(!taker.finished)
        close(child)
        clock.advance(by: SpoolLock.retryEvery)
        ClockWaitTests.eventually("the lock taken") { taker.finished }
        guard case .success = taker.outcome else { Issue.record("\(String(describing: taker.outcome))"); return }
    }

    @Test func aLockOfOursThatStaysHeldIsRefusedOnceThePatienceIsOver() throws {
        let dir = try TemporaryDirectory()
        let first = try SpoolLock(LocalFileSystem(), root: dir.path)
        let clock = ManualClock()
        let taker = Taker(root: dir.path, clock: clock)
        ClockWaitTests.eventually("the new lock to wait on the clock") { clock.waiting == 1 }
        clock.advance(by: 1.9)
        ClockWaitTests.eventually("the new lock to wait again, its patience not over") { clock.waiting == 1 && !taker.finished }
        clock.advance(by: 0.2)
        ClockWaitTests.eventually("the new lock to give up") { taker.finished }
        guard case .failure(let error as SpoolLock.Failure)? = taker.outcome, case .heldBy(let pid, _) = error else {
            Issue.record("\(String(describing: taker.outcome))"); return
        }
        #expect(pid == getpid())
        withExtendedLifetime(first) {}
    }

    /// The holder is named only from a whole line: a stamp cut short by a failed write names nobody.
    @Test func theHoldersPidIsReadFromAWholeLineOnly() {
        #expect(SpoolLock.processID(stamp: Array("1001\n".utf8)) == 1001)
        #expect(SpoolLock.processID(stamp: Array("10".utf8)) == nil)
        #expect(SpoolLock.processID(stamp: []) == nil)
        #expect(SpoolLock.processID(stamp: Array("x\n".utf8)) == nil)
    }
}
