import Foundation
import Synchronization
import UploaderSupport

/// The simulation's time: it moves only when the simulator says so.
final class SimClock: Clock {
    private let instant: Mutex<Instant>
    private let sleepers: HandMovedSleepers

    /// `scheduler` runs the threads that wait on this clock.
    init(start: Date, scheduler: any Scheduler = .system) {
        instant = Mutex(Instant(wall: start, mono: 1000))
        sleepers = HandMovedSleepers(scheduler: scheduler)
    }

    var now: Date { instant.withLock { $0.wall } }
    var monotonic: Double { instant.withLock { $0.mono } }
    var current: Instant { instant.withLock { $0 } }

    func advance(by seconds: Double) {
        instant.withLock { $0 = $0.adding(max(0, seconds)) }
        sleepers.clockMoved()
    }

    /// The wall clock is set forward or back (an operator, NTP stepping it); monotonic time goes on steadily.
    func jumpWall(by seconds: Double) {
        instant.withLock { instant in
            latest.withLock { $0 = max($0, instant.wall) }
            instant.wall = instant.wall.addingTimeInterval(seconds)
        }
    }

    /// The wall time now, or, while the wall clock is behind a time it showed before a jump
    /// back, just past that time (so anything stamped before the jump counts as earlier).
    var latestWall: Date {
        let before = latest.withLock { $0 }
        return before < now ? now : before.addingTimeInterval(0.002)
    }
    private let latest = Mutex(Date.distantPast)

    /// How many threads wait on this clock now, the owners' timers aside (`SimTicker`: the
    /// world moves time to their deadlines itself).
    var sleeping: Int { sleepers.count - timersSleeping.withLock { $0 } }
    private let timersSleeping = Mutex(0)

    /// Marks the calling thread as an owner's timer.
    static func markTimerThread() { Thread.current.threadDictionary[timerKey] = true }
    private static let timerKey = "sim-owner-timer"

    func wait(for latch: Latch?, until deadline: Double) -> Bool {
        let timer = Thread.current.threadDictionary[Self.timerKey] != nil
        if timer { timersSleeping.withLock { $0 += 1 } }
        defer { if timer { timersSleeping.withLock { $0 -= 1 } } }
        return sleepers.wait(for: latch, until: deadline) { monotonic }
    }
}
