import UploaderSupport

/// `upload_window = 22:00-06:00 12:00-13:00` read into `UploadWindows`: the reading is the
/// config's (its messages quote the value as config errors do), the windows a value the core uses.
extension UploadWindows {
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
