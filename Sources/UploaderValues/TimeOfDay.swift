import Foundation

/// A minute of the local day (`HH:MM`, 00:00 to 24:00), the unit of `upload_window` and the
/// `max_rate` timetable; with the calendar sums that turn it into moments, so DST is the
/// calendar's business, not ours.
package struct TimeOfDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Minutes since local midnight, 0...1440 (1440 only as the end of a window: `24:00`).
    package var minutes: Int

    package init(minutes: Int) {
        precondition((0...1440).contains(minutes))
        self.minutes = minutes
    }

    /// `HH:MM` (one-digit hours allowed); `24:00` only when `allowEnd`.
    package init?(parsing text: String, allowEnd: Bool = false) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let hour = Int(parts[0]), let minute = Int(parts[1]), minute < 60 else { return nil }
        guard hour < 24 || (allowEnd && hour == 24 && minute == 0) else { return nil }
        self.init(minutes: hour * 60 + minute)
    }

    package var description: String { String(format: "%02d:%02d", minutes / 60, minutes % 60) }

    package static func < (a: TimeOfDay, b: TimeOfDay) -> Bool { a.minutes < b.minutes }

    /// The minute of the local day `date` falls in.
    package static func of(_ date: Date, in zone: TimeZone) -> TimeOfDay {
        let parts = LocalCalendar.make(zone).dateComponents([.hour, .minute], from: date)
        return TimeOfDay(minutes: (parts.hour ?? 0) * 60 + (parts.minute ?? 0))
    }

    /// The first moment after `date` when the local clock reads this time (24:00 is the next midnight).
    package func next(after date: Date, in zone: TimeZone) -> Date {
        let wanted = DateComponents(hour: (minutes / 60) % 24, minute: minutes % 60, second: 0)
        let calendar = LocalCalendar.make(zone)
        // A time a DST jump skips counts at the first moment after the gap.
        return calendar.nextDate(after: date, matching: wanted, matchingPolicy: .nextTime)
            ?? date.addingTimeInterval(86_400)
    }
}

/// The Gregorian calendar in a given zone, and local timestamps for log lines.
package enum LocalCalendar {
    package static func make(_ zone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }

    /// `2026-11-29T22:00:00+01:00`: a moment as the operator's clock shows it, with its offset.
    package static func format(_ date: Date, in zone: TimeZone) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZoneSeparator: .colon, timeZone: zone))
    }
}
