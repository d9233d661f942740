@preconcurrency import Glibc
import Foundation
import UploaderSupport
import UploaderConfig

/// Parses a `Retry-After` header (RFC 9110 §10.2.3) into seconds from `now`.
package enum RetryAfter {
    /// `delta-seconds` or an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`); a date in the past gives 0.
    package static func parse(_ value: String, now: Date) -> TimeInterval? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            return text.count > 10 ? TimeInterval(Int32.max) : TimeInterval(text)
        }
        guard let date = imfFixdate(text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// `Day, DD Mon YYYY HH:MM:SS GMT`, exactly (the only date form senders may generate).
    package static func imfFixdate(_ text: String) -> Date? {
        let fields = text.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 6, fields[0].count == 4, fields[0].hasSuffix(","),
              ["Mon,", "Tue,", "Wed,", "Thu,", "Fri,", "Sat,", "Sun,"].contains(String(fields[0])),
              fields[5] == "GMT",
              fields[1].count == 2, let day = Int(fields[1]),
              let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
                .firstIndex(of: String(fields[2])),
              fields[3].count == 4, let year = Int(fields[3])
        else { return nil }
        let clock = fields[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
              let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
              (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}
