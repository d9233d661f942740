import Foundation
import CCurl
import UploaderSupport
import UploaderConfig

/// Parses a `Retry-After` header (RFC 9110 §10.2.3) into seconds from `now`.
package enum RetryAfter {
    /// `delay-seconds`, or an HTTP-date in any of the three forms RFC 9110 §5.6.7 makes
    /// recipients accept: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`). A date in
    /// the past gives 0.
    package static func parse(_ value: String, now: Date) -> TimeInterval? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            return text.count > 10 ? TimeInterval(Int32.max) : TimeInterval(text)
        }
        guard let date = httpDate(text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// An HTTP-date read by libcurl's `curl_getdate()` (the parser curl uses for cookies and
    /// `Last-Modified`). curl also reads looser forms; every HTTP-date has a month name and a
    /// `HH:MM:SS` time, so text with neither (`soon`, `-5`, `1.5`) is refused before it is asked.
    package static func httpDate(_ text: String) -> Date? {
        guard text.utf8.count <= 64, !text.utf8.contains(0), text.contains(":"),
              Self.months.contains(where: { text.contains($0) }) else { return nil }
        let seconds = curl_getdate(text, nil)
        guard seconds != -1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}
