import Foundation
import UploaderSupport

/// Files waiting in retry/ and when each is due, with the earliest due time kept at hand: the
/// owner asks for it after every event, and a scan of every entry each time would make a spool
/// with many files in retry/ slow to the point of stalling (the scan happens only when one is due).
package struct RetrySchedule: Sendable, Equatable {
    private(set) var entries: [RelativePath: Date] = [:]
    /// The earliest due time among `entries`, nil when there is none.
    private(set) var earliest: Date?

    package init() {}

    package var isEmpty: Bool { entries.isEmpty }
    package var count: Int { entries.count }

    package mutating func set(_ path: RelativePath, due: Date) {
        let old = entries.updateValue(due, forKey: path)
        if old == earliest && old != nil && due > old! {
            earliest = entries.values.min()
        } else {
            earliest = min(earliest ?? due, due)
        }
    }

    /// Takes out every entry due at `now`, earliest first (ties by path).
    package mutating func takeDue(at now: Date) -> [RelativePath] {
        guard let earliest, earliest <= now else { return [] }
        let due = entries.filter { $0.value <= now }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }
        for (path, _) in due { entries[path] = nil }
        self.earliest = entries.values.min()
        return due.map(\.key)
    }
}
