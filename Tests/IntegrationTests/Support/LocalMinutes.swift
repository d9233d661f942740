import Foundation

/// Times of day around the current one, for configs that must include or exclude "now": tests
/// run the daemon with `TZ=UTC` and build their `HH:MM` values in UTC too, so no test waits for
/// a real minute or depends on the machine's zone.
enum LocalMinutes {
    static let environment = ["TZ": "UTC"]

    /// `HH:MM` (UTC) of now moved by `minutes`, wrapped into the day.
    static func at(_ minutes: Int, from now: Date = Date()) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.hour, .minute], from: now)
        let total = (((parts.hour ?? 0) * 60 + (parts.minute ?? 0) + minutes) % 1440 + 1440) % 1440
        return String(format: "%02d:%02d", total / 60, total % 60)
    }

    /// A `max_rate` timetable with `rate` for the hour around now and `other` for the rest of the day.
    static func timetable(now rate: String, otherwise other: String) -> String {
        let entries = [(at(-30), rate), (at(30), other)].sorted { $0.0 < $1.0 }
        return entries.map { "\($0.0),\($0.1)" }.joined(separator: " ")
    }
}
