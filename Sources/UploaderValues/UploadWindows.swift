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
}
