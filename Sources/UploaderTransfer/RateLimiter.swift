@preconcurrency import Glibc
import Foundation
import UploaderSupport
import UploaderConfig

/// One byte budget shared by all of a profile's transfers (`max_rate`): a token bucket whose
/// rate follows the profile's timetable, switching at the minute an entry begins.
///
/// Transfers ask for bytes before handing them to curl; when the bucket is empty the
/// calling transfer thread sleeps until enough has refilled, so the profile as a whole
/// never exceeds the rate however many workers run.
package final class RateLimiter: @unchecked Sendable {
    private let lock = NSLock()
    private let schedule: RateSchedule
    private let timeZone: TimeZone
    /// The cap now; nil while the timetable says `off`.
    private var bytesPerSecond: Double?
    /// When the timetable next changes the cap (nil: never).
    private var nextSwitch: Date?
    /// At most this much may be sent in one burst (a quarter second's worth, at least 16 KiB).
    private var burst: Double = 0
    /// The smallest grant worth a send: 16 KiB, or 50 ms worth at low rates (so a slow
    /// profile still moves a byte well within any stall timeout).
    private var minimumChunk: Double = 1
    private var available: Double = 0
    private var last: Double

    private let clock: any Clock

    package convenience init(bytesPerSecond: Int64, clock: any Clock = SystemClock()) {
        precondition(bytesPerSecond > 0)
        self.init(schedule: .constant(bytesPerSecond), clock: clock)
    }

    package init(schedule: RateSchedule, timeZone: TimeZone = .current, clock: any Clock = SystemClock()) {
        self.clock = clock
        self.schedule = schedule
        self.timeZone = timeZone
        self.last = clock.monotonic
        follow(schedule.rate(at: clock.now, in: timeZone))
    }

    /// The cap in force now (nil: none); for tests and logs.
    package var currentRate: Int64? {
        lock.lock(); defer { lock.unlock() }
        switchIfDue()
        return bytesPerSecond.map { Int64($0) }
    }

    /// Blocks until up to `wanted` bytes may be sent; returns how many (at least 1).
    package func acquire(_ wanted: Int) -> Int {
        while true {
            lock.lock()
            switchIfDue()
            guard let bytesPerSecond else {
                lock.unlock()
                return max(wanted, 1)
            }
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

    /// Takes the timetable's next entry once its minute has come. Called with the lock held.
    private func switchIfDue() {
        guard let nextSwitch, clock.now >= nextSwitch else { return }
        follow(schedule.rate(at: clock.now, in: timeZone))
    }

    private func follow(_ rate: (bytesPerSecond: Int64?, until: Date?)) {
        nextSwitch = rate.until
        bytesPerSecond = rate.bytesPerSecond.map(Double.init)
        let perSecond = bytesPerSecond ?? 0
        burst = max(16 * 1024, perSecond / 4)
        minimumChunk = min(16 * 1024, max(1, perSecond / 20))
        available = 0
        last = clock.monotonic
    }
}
