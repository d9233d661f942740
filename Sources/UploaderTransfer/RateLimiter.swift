@preconcurrency import Glibc
import Foundation
import UploaderSupport
import UploaderConfig

/// One byte budget shared by all of a profile's transfers (`max_rate`): a token bucket.
///
/// Transfers ask for bytes before handing them to curl; when the bucket is empty the
/// calling transfer thread sleeps until enough has refilled, so the profile as a whole
/// never exceeds the rate however many workers run.
package final class RateLimiter: @unchecked Sendable {
    private let lock = NSLock()
    private let bytesPerSecond: Double
    /// At most this much may be sent in one burst (a quarter second's worth, at least 16 KiB).
    private let burst: Double
    /// The smallest grant worth a send: 16 KiB, or 50 ms worth at low rates (so a slow
    /// profile still moves a byte well within any stall timeout).
    private let minimumChunk: Double
    private var available: Double
    private var last: Double

    private let clock: any Clock

    package init(bytesPerSecond: Int64, clock: any Clock = SystemClock()) {
        self.clock = clock
        precondition(bytesPerSecond > 0)
        self.bytesPerSecond = Double(bytesPerSecond)
        self.burst = max(16 * 1024, Double(bytesPerSecond) / 4)
        self.minimumChunk = min(16 * 1024, max(1, Double(bytesPerSecond) / 20))
        self.available = 0
        self.last = clock.monotonic
    }

    /// Blocks until up to `wanted` bytes may be sent; returns how many (at least 1).
    package func acquire(_ wanted: Int) -> Int {
        while true {
            lock.lock()
            let now = clock.monotonic
            available = min(burst, available + (now - last) * bytesPerSecond)
            last = now
            // Hand out at least a useful chunk: granting whatever trickled in since the last
            // call (a few hundred bytes with several workers) made curl send ~1.4 KB per
            // syscall and burnt 1.6 cores to move 20 MiB/s.
            let chunk = max(1, min(Double(wanted), minimumChunk))
            if available >= chunk {
                let granted = min(wanted, Int(available))
                available -= Double(granted)
                lock.unlock()
                return max(granted, 1)
            }
            let wait = (chunk - available) / bytesPerSecond
            lock.unlock()
            usleep(useconds_t(max(1000, min(wait, 0.1) * 1_000_000)))
        }
    }
}
