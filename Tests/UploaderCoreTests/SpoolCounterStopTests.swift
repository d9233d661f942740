import Foundation
import Synchronization
import Testing
@testable import UploaderDaemon
import UploaderSupport

/// `SpoolCounter.stop` returns only once its counting thread has ended: the process exits right
/// after it, and an exit while that thread was mid-count crashed `run --once` after its last line.
@Suite struct SpoolCounterStopTests {
    @Test func stopWaitsForTheRoundUnderWayToEnd() throws {
        let clock = ManualClock()
        let counter = SpoolCounter(logger: Logger(level: .error), clock: clock)
        let inRound = Latch(), release = Latch()
        let updated = Mutex(0)
        counter.start(runners: {
            inRound.open()
            _ = SystemClock().wait(for: release, until: SystemClock().monotonic + 30)
            return []
        }, onUpdate: { updated.withLock { $0 += 1 } })
        #expect(spinUntil { inRound.isOpen }, "the counting thread is in its round")

        let stopped = Mutex(false)
        SystemScheduler.system.startThread(named: "stopper") {
            counter.stop()
            stopped.withLock { $0 = true }
        }
        // The stopper waits on the (hand-moved) clock for the thread to end, and has not returned.
        #expect(spinUntil { clock.waiting == 1 }, "stop waits for the counting thread")
        #expect(!stopped.withLock { $0 })

        release.open()
        #expect(spinUntil { stopped.withLock { $0 } })
        #expect(updated.withLock { $0 } == 1, "the round under way ended before stop returned")
    }
}
