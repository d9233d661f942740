import Foundation
import Synchronization
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderTransfer

/// The world waiting for the workers while they sleep on the simulated clock: a dead process's
/// transfers in the rate limiter, which the world waits to see end (journalled seed 500547, where
/// every thread waited and the simulator stopped on a deadlock).
@Suite struct BatonSchedulerTests {
    @Test func threadsAsleepOnTheClockWhileTheWorldWaitsForThemAreWokenByTimeMoving() {
        let baton = BatonScheduler(choices: ChoiceSource(seed: 1))
        let clock = SimClock(start: Date(timeIntervalSince1970: 1_800_000_000), scheduler: baton)
        baton.timeMoves = {
            guard clock.sleeping > 0 else { return false }
            clock.advance(by: 0.1)
            return true
        }
        // Two transfers share 1,000 bytes a second and want 300 bytes each: 0.6 s of refills,
        // handed out 50 bytes at a time, so each sleeps again after the other took what came.
        let limiter = RateLimiter(bytesPerSecond: 1_000, clock: clock)
        let sent = Mutex<[Int]>([])
        let ended = baton.makeWakeUp()
        let start = clock.monotonic
        for name in ["transfer-a", "transfer-b"] {
            baton.startThread(named: name) {
                var got = 0
                while got < 300 { got += limiter.acquire(300 - got) }
                sent.withLock { $0.append(got) }
                ended.signal()
            }
        }
        ended.wait()
        ended.wait()
        #expect(sent.withLock { $0 } == [300, 300])
        #expect(clock.monotonic - start >= 0.6 - 1e-9, "the bytes went out at the rate: \(clock.monotonic - start) s")
    }
}
