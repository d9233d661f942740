import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig

/// One byte budget shared by all of a profile's transfers (`max_rate`): a token bucket whose
/// rate follows the profile's timetable, switching at the minute an entry begins.
///
/// Transfers ask for bytes before handing them to curl; when the bucket is empty the
/// calling transfer thread sleeps on the clock until enough has refilled, so the profile as a
/// whole never exceeds the rate however many workers run.
package final class RateLimiter: Sendable {
    /// The bucket and the timetable entry it follows: everything the lock guards.
    private struct Bucket {
        /// The cap now; nil while the timetable says `off`.
        var bytesPerSecond: Double?
        /// When the timetable next changes the cap (nil: never).
        var nextSwitch: Date?
        /// At most this much may be sent in one burst (a quarter second's worth, at least 16 KiB).
        var burst: Double = 0
        /// The smallest grant worth a send: 16 KiB, or 50 ms worth at low rates (so a slow
        /// profile still moves a byte well within any stall timeout).
        var minimumChunk: Double = 1
        var available: Double = 0
        var last: Double

        init(following rate: (bytesPerSecond: Int64?, until: Date?), at monotonic: Double) {
            last = monotonic
            follow(rate, at: monotonic)
        }

        mutating func follow(_ rate: (bytesPerSecond: Int64?, until: Date?), at monotonic: Double) {
            nextSwitch = rate.until
            bytesPerSecond = rate.bytesPerSecond.map(Double.init)
            let perSecond = bytesPerSecond ?? 0
            burst = max(16 * 1024, perSecond / 4)
            minimumChunk = min(16 * 1024, max(1, perSecond / 20))
            available = 0
            last = monotonic
        }
    }

    /// What one look at the bucket decided: send this many bytes, or sleep this long first.
    private enum Grant {
        case send(Int)
        case wait(seconds: Double)
    }

    private let bucket: Mutex<Bucket>
    private let schedule: RateSchedule
    private let timeZone: TimeZone
    private let clock: any Clock

    package convenience init(bytesPerSecond: Int64, clock: any Clock = SystemClock()) {
        precondition(bytesPerSecond > 0)
        self.init(schedule: .constant(bytesPerSecond), clock: clock)
    }

    package init(schedule: RateSchedule, timeZone: TimeZone = .current, clock: any Clock = SystemClock()) {
        self.clock = clock
        self.schedule = schedule
        self.timeZone = timeZone
        bucket = Mutex(Bucket(following: schedule.rate(at: clock.now, in: timeZone), at: clock.monotonic))
    }

    /// The cap in force now (nil: none); for tests and logs.
    package var currentRate: Int64? {
        bucket.withLock { bucket in
            switchIfDue(&bucket)
            return bucket.bytesPerSecond.map { Int64($0) }
        }
    }

    /// Blocks until up to `wanted` bytes may be sent; returns how many (at least 1).
    package func acquire(_ wanted: Int) -> Int {
        while true {
            switch grant(wanted) {
            case .send(let bytes):
                return bytes
            case .wait(let seconds):
                clock.sleep(until: clock.monotonic + max(0.001, min(seconds, 0.1)))
            }
        }
    }

    private func grant(_ wanted: Int) -> Grant {
        bucket.withLock { bucket in
            switchIfDue(&bucket)
            guard let bytesPerSecond = bucket.bytesPerSecond else { return .send(max(wanted, 1)) }
            let now = clock.monotonic
            bucket.available = min(bucket.burst, bucket.available + (now - bucket.last) * bytesPerSecond)
            bucket.last = now
            // Hand out at least a useful chunk: granting whatever trickled in since the last
            // call (a few hundred bytes with several workers) made curl send ~1.4 KB per
            // syscall and burnt 1.6 cores to move 20 MiB/s.
            let chunk = max(1, min(Double(wanted), bucket.minimumChunk))
            guard bucket.available >= chunk else { return .wait(seconds: (chunk - bucket.available) / bytesPerSecond) }
            let granted = min(wanted, Int(bucket.available))
            bucket.available -= Double(granted)
            return .send(max(granted, 1))
        }
    }

    /// Takes the timetable's next entry once its minute has come.
    private func switchIfDue(_ bucket: inout Bucket) {
        guard let nextSwitch = bucket.nextSwitch, clock.now >= nextSwitch else { return }
        bucket.follow(schedule.rate(at: clock.now, in: timeZone), at: clock.monotonic)
    }
}
