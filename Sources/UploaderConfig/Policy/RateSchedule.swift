import Foundation
import UploaderValues

/// `max_rate`: one cap all day, or a timetable of caps by local time as rclone's `--bwlimit`
/// (`08:00,512KiB 18:00,10MiB 23:00,off`): each entry holds from its time to the next one's,
/// the last wrapping past midnight to the first.
package enum RateSchedule: Sendable, Equatable, CustomStringConvertible {
    /// Bytes per second for the whole profile; 0 = no cap.
    case constant(Int64)
    /// Sorted by time, at least one entry; a nil rate is `off` (no cap).
    case timetable([Entry])

    package struct Entry: Sendable, Equatable {
        package var start: TimeOfDay
        package var bytesPerSecond: Int64?

        package init(start: TimeOfDay, bytesPerSecond: Int64?) {
            self.start = start
            self.bytesPerSecond = bytesPerSecond
        }
    }

    /// True when some time of day has a cap, so a limiter is needed at all.
    package var limitsSometimes: Bool {
        switch self {
        case .constant(let rate): return rate > 0
        case .timetable(let entries): return entries.contains { $0.bytesPerSecond != nil }
        }
    }

    /// The cap at `date` (nil: none) and when it next changes (nil: never).
    package func rate(at date: Date, in zone: TimeZone) -> (bytesPerSecond: Int64?, until: Date?) {
        switch self {
        case .constant(let rate):
            return (rate > 0 ? rate : nil, nil)
        case .timetable(let entries):
            let now = TimeOfDay.of(date, in: zone)
            // The entry holding now: the last one at or before it, else the last of the day (wrapped).
            let current = entries.last { $0.start <= now } ?? entries[entries.count - 1]
            let nextStart = entries.first { $0.start > now }?.start ?? entries[0].start
            return (current.bytesPerSecond, entries.count > 1 ? nextStart.next(after: date, in: zone) : nil)
        }
    }

    package var description: String {
        switch self {
        case .constant(let rate): return ConfigValue.formatSize(rate)
        case .timetable(let entries):
            return entries.map { "\($0.start),\($0.bytesPerSecond.map(ConfigValue.formatSize) ?? "off")" }.joined(separator: " ")
        }
    }

    /// A plain size (`10MiB`, `10MiB/s`, `0`) or a timetable of `HH:MM,RATE` entries.
    package static func parse(_ text: String) -> Result<RateSchedule, PolicyValueError> {
        guard text.contains(",") else {
            guard let rate = ConfigValue.size(text.lowercased().hasSuffix("/s") ? String(text.dropLast(2)) : text) else {
                return .failure(PolicyValueError("invalid rate for max_rate"))
            }
            return .success(.constant(rate))
        }
        var entries: [Entry] = []
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
            let parts = word.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2, let start = TimeOfDay(parsing: String(parts[0])) else {
                return .failure(PolicyValueError("invalid timetable entry \(quotedForMessage(String(word), limit: 40)) for max_rate (use HH:MM,RATE, e.g. 08:00,512KiB or 23:00,off)"))
            }
            var rateText = String(parts[1]).lowercased()
            if rateText.hasSuffix("/s") { rateText.removeLast(2) }
            let rate: Int64?
            if rateText == "off" || rateText == "0" {
                rate = nil
            } else if let size = ConfigValue.size(rateText) {
                rate = size
            } else {
                return .failure(PolicyValueError("invalid rate \(quotedForMessage(String(parts[1]), limit: 40)) in max_rate entry \(quotedForMessage(String(word), limit: 40)) (use a size such as 512KiB, or off)"))
            }
            if let last = entries.last {
                if last.start == start {
                    return .failure(PolicyValueError("max_rate entries \(last.start) and \(quotedForMessage(String(word), limit: 40)) overlap: two rates for the same time"))
                }
                if start < last.start {
                    return .failure(PolicyValueError("max_rate entry \(quotedForMessage(String(word), limit: 40)) comes after \(last.start): list the entries in order of time"))
                }
            }
            entries.append(Entry(start: start, bytesPerSecond: rate))
        }
        guard !entries.isEmpty else { return .failure(PolicyValueError("max_rate timetable is empty")) }
        return .success(.timetable(entries))
    }
}
