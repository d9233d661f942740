/// The log fields that hold numbers. With `log_format = json` each is written as a JSON number
/// (`"bytes":48213`, `"duration_s":0.123`, `"http_status":201`), so a collector can sum and
/// compare them; every other field is a string. The names are part of the documented contract.
package enum LogFields {
    /// Counts, sizes in bytes, seconds (`_s`, `_seconds`), percentages and statuses.
    package static let numeric: Set<String> = [
        "attempts", "bytes", "duration_s", "errors", "eta_s", "exit_status", "failed", "files", "hooks",
        "http_status", "next_try_in_s", "offline_seconds", "offset", "output_dropped_bytes", "part_size", "parts",
        "parts_done", "parts_total", "passes", "paused_seconds", "percent", "queued", "refused_files",
        "refused_in_a_row", "retry", "retry_scheduled", "sent", "size", "size_sent", "unchanged", "uploading",
    ]

    /// Whether `text` is a JSON number as written (`-?digits(.digits)?`), so it may go out unquoted.
    package static func isJSONNumber(_ text: String) -> Bool {
        var bytes = text.utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let isDigit = { (b: UInt8) in b >= 48 && b <= 57 }
        guard let first = bytes.first, isDigit(first) else { return false }
        let whole = bytes.prefix(while: isDigit)
        if whole.count > 1 && first == UInt8(ascii: "0") { return false }
        let rest = bytes.dropFirst(whole.count)
        if rest.isEmpty { return true }
        guard rest.first == UInt8(ascii: "."), rest.count > 1 else { return false }
        return rest.dropFirst().allSatisfy(isDigit)
    }
}
