import Foundation
import UploaderValues

/// How long a file waits before its next attempt: exponential backoff with full jitter.
///
/// Full jitter spreads the retries of many files failing together (an outage) over the
/// whole window instead of bunching them at the same instants.
package enum Backoff {
    /// A uniform pick in `0...min(max, base * 2^(n-1))`, unless the server's `retryAfter`
    /// is given: that wins, capped by `max`. `n` is the attempt that just failed (1-based).
    package static func delay(forAttempt n: Int, base: TimeInterval, max cap: TimeInterval,
                              retryAfter: TimeInterval? = nil,
                              random: (ClosedRange<Double>) -> Double) -> TimeInterval {
        if let retryAfter { return min(cap, Swift.max(0, retryAfter)) }
        let exponent = Double(min(Swift.max(n, 1) - 1, 62))
        let window = min(cap, base * pow(2, exponent))
        guard window > 0 else { return 0 }
        return random(0...window)
    }
}
