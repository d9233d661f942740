import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

@Suite struct RateLimiterTests {
    @Test func grantsAreUsefulChunksNotTrickles() {
        let limiter = RateLimiter(bytesPerSecond: 20 << 20)
        for _ in 0..<50 {
            #expect(limiter.acquire(64 * 1024) >= 16 * 1024)
        }
    }

    @Test func aSlowRateStillGrantsWithinAFractionOfASecond() {
        let limiter = RateLimiter(bytesPerSecond: 1024)
        let start = Date()
        let granted = limiter.acquire(64 * 1024)
        #expect(granted >= 1 && granted <= 64 * 1024)
        #expect(Date().timeIntervalSince(start) < 0.5)
    }

    @Test func fourThreadsTogetherStayNearTheRate() {
        let rate = 4 << 20
        let limiter = RateLimiter(bytesPerSecond: Int64(rate))
        let total = Total()
        let group = DispatchGroup()
        let start = Date()
        for _ in 0..<4 {
            group.enter()
            Thread {
                var mine = 0
                while Date().timeIntervalSince(start) < 0.5 { mine += limiter.acquire(64 * 1024) }
                total.add(mine)
                group.leave()
            }.start()
        }
        group.wait()
        let seconds = Date().timeIntervalSince(start)
        let sent = total.value
        // At most the rate over the elapsed time plus one 16 KiB grant per thread.
        #expect(Double(sent) <= Double(rate) * seconds + 4 * 64 * 1024)
        #expect(Double(sent) >= Double(rate) * 0.5 * 0.7)
    }
}

/// Bytes granted across the test's threads.
private final class Total: @unchecked Sendable {
    private let lock = NSLock()
    private var sum = 0
    func add(_ n: Int) { lock.lock(); sum += n; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return sum }
}
