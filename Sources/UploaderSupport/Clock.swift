@preconcurrency import Glibc
import Foundation

/// The one source of time for the whole program, passed in wherever time is read.
///
/// Wall time is what gets written down (manifests, retry due dates, logs); monotonic
/// seconds are what gets measured (probe backoff, shutdown grace, durations), so a clock
/// step by NTP never shortens a grace period. Tests pass a clock they advance by hand.
package protocol Clock: Sendable {
    /// Wall-clock time.
    var now: Date { get }
    /// Seconds on a clock that never goes back (CLOCK_MONOTONIC).
    var monotonic: Double { get }
}

extension Clock {
    /// Both readings at once, as the transition function takes them.
    package var instant: Instant { Instant(wall: now, mono: monotonic) }
}

/// One moment, as both clocks read it.
package struct Instant: Sendable, Equatable {
    package var wall: Date
    package var mono: Double

    package init(wall: Date, mono: Double) {
        self.wall = wall
        self.mono = mono
    }

    /// The same moment `seconds` later on both clocks.
    package func adding(_ seconds: Double) -> Instant {
        Instant(wall: wall.addingTimeInterval(seconds), mono: mono + seconds)
    }
}

/// The real clocks: `Date()` and `CLOCK_MONOTONIC`.
package struct SystemClock: Clock {
    package init() {}

    package var now: Date { Date() }

    package var monotonic: Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
