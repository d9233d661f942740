import Foundation

/// `upload_window`: spans of local time in which uploads may start (each may wrap past
/// midnight). No span at all means always.
package struct UploadWindows: Sendable, Equatable, CustomStringConvertible {
    /// From `start` up to (not including) `end`; `start > end` wraps past midnight.
    package struct Span: Sendable, Equatable, CustomStringConvertible {
        package var start: TimeOfDay
        package var end: TimeOfDay

        package init(start: TimeOfDay, end: TimeOfDay) {
            self.start = start
            self.end = end
        }

        func contains(_ t: TimeOfDay) -> Bool {
            start < end ? (start <= t && t < end) : (t >= start || t < end)
        }

        package var description: String { "\(start)-\(end)" }
    }

    package var spans: [Span]

    package init(_ spans: [Span] = []) { self.spans = spans }

    package var isAlways: Bool { spans.isEmpty }

    package var description: String { spans.map(\.description).joined(separator: " ") }

    /// Whether `date` is inside a window, and the next moment that may change (nil: never).
    package func phase(at date: Date, in zone: TimeZone) -> (open: Bool, until: Date?) {
        guard !spans.isEmpty else { return (true, nil) }
        let now = TimeOfDay.of(date, in: zone)
        let open = spans.contains { $0.contains(now) }
        // Closed: only a start can open it. Open: any end may close it (an overlapping span is
        // looked at again then, at the cost of one wake-up).
        let boundaries = open ? spans.map(\.end) : spans.map(\.start)
        return (open, boundaries.map { $0.next(after: date, in: zone) }.min())
    }

    /// Parses `22:00-06:00 12:00-13:00`; nil with a message naming the bad span.
    package static func parse(_ text: String) -> Result<UploadWindows, PolicyValueError> {
        var spans: [Span] = []
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }) {
            let ends = word.split(separator: "-", omittingEmptySubsequences: false)
            guard ends.count == 2, let start = TimeOfDay(parsing: String(ends[0])),
                  let end = TimeOfDay(parsing: String(ends[1]), allowEnd: true) else {
                return .failure(PolicyValueError("invalid window \(quotedForMessage(String(word), limit: 40)) (use HH:MM-HH:MM, e.g. 22:00-06:00)"))
            }
            guard start.minutes != end.minutes % 1440 else {
                return .failure(PolicyValueError("window \(quotedForMessage(String(word), limit: 40)) is empty (leave upload_window empty to upload at any time)"))
            }
            spans.append(Span(start: start, end: end))
        }
        return .success(UploadWindows(spans))
    }
}

/// A value of one of the policy keys that does not parse, with the message to show.
package struct PolicyValueError: Error, Sendable, Equatable {
    package var message: String

    package init(_ message: String) { self.message = message }
}
