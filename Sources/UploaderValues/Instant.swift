import Foundation

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
