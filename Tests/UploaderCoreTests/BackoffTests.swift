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

@Suite("Backoff is full jitter over a doubling window, and Retry-After wins")
struct BackoffTests {
    /// Returns the top of the range, so the test sees the window itself.
    let top: (ClosedRange<Double>) -> Double = { $0.upperBound }

    @Test func windowDoublesFromTheBasePerAttempt() {
        #expect(Backoff.delay(forAttempt: 1, base: 30, max: 3600, random: top) == 30)
        #expect(Backoff.delay(forAttempt: 2, base: 30, max: 3600, random: top) == 60)
        #expect(Backoff.delay(forAttempt: 4, base: 30, max: 3600, random: top) == 240)
    }

    @Test func windowIsCappedByMaxEvenForHugeAttemptNumbers() {
        #expect(Backoff.delay(forAttempt: 8, base: 30, max: 3600, random: top) == 3600)
        #expect(Backoff.delay(forAttempt: 10_000, base: 30, max: 3600, random: top) == 3600)
    }

    @Test func jitterPicksFromZeroToTheWindow() {
        var seen: ClosedRange<Double>?
        let delay = Backoff.delay(forAttempt: 3, base: 10, max: 3600, random: { seen = $0; return $0.upperBound / 2 })
        #expect(seen == 0...40)
        #expect(delay == 20)
    }

    @Test func retryAfterWinsButIsCappedByMax() {
        #expect(Backoff.delay(forAttempt: 1, base: 30, max: 3600, retryAfter: 2, random: top) == 2)
        #expect(Backoff.delay(forAttempt: 9, base: 30, max: 600, retryAfter: 86_400, random: top) == 600)
    }
}
