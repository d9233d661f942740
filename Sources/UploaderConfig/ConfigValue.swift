import Foundation
import UploaderSupport

/// Reads and writes the config's value syntax: durations, sizes, booleans, choices.
package enum ConfigValue {
    package static let durationHint = "use e.g. 250ms, 30s, 5m, 1h, 7d"
    static let sizeHint = "use e.g. 512, 64KiB, 8MiB, 1GiB"
    static let booleanHint = "use yes/no, true/false, on/off or 1/0"

    private static let durationUnits: [(String, Int64)] = [
        ("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000),
    ]
    /// Upper bound (100 years) so arithmetic on durations can never overflow.
    private static let maxDurationMilliseconds: Int64 = 100 * 365 * 86_400_000

    /// `250ms`, `30s`, `1.5h`, `1h30m`, or plain `0`; whole milliseconds, in seconds.
    package static func duration(_ text: String) -> TimeInterval? {
        let s = Array(text.lowercased().unicodeScalars)
        if s == ["0"] { return 0 }
        guard !s.isEmpty, s.count <= 64 else { return nil }
        var total: Double = 0
        var i = 0
        while i < s.count {
            let numberStart = i
            while i < s.count, ("0"..."9").contains(s[i]) || s[i] == "." { i += 1 }
            guard i > numberStart, let number = Double(String(String.UnicodeScalarView(s[numberStart..<i]))) else { return nil }
            let unitStart = i
            while i < s.count, ("a"..."z").contains(s[i]) { i += 1 }
            let unit = String(String.UnicodeScalarView(s[unitStart..<i]))
            guard let factor = durationUnits.first(where: { $0.0 == unit })?.1 else { return nil }
            total += number * Double(factor)
            guard total.isFinite, total <= Double(maxDurationMilliseconds) else { return nil }
        }
        return (total.rounded() / 1000)
    }

    /// The shortest exact form: `0`, `250ms`, `30s`, `90m`, `7d`.
    static func formatDuration(_ seconds: TimeInterval) -> String {
        guard seconds.isFinite, seconds > 0 else { return "0" }
        let ms = Int64(min((seconds * 1000).rounded(), Double(maxDurationMilliseconds)))
        if ms == 0 { return "0" }
        for (unit, factor) in durationUnits.reversed() where ms % factor == 0 {
            return "\(ms / factor)\(unit)"
        }
        return "\(ms)ms"
    }

    private static let sizeUnits: [(String, Int64)] = [
        ("", 1), ("b", 1),
        ("k", 1 << 10), ("kb", 1 << 10), ("kib", 1 << 10),
        ("m", 1 << 20), ("mb", 1 << 20), ("mib", 1 << 20),
        ("g", 1 << 30), ("gb", 1 << 30), ("gib", 1 << 30),
        ("t", 1 << 40), ("tb", 1 << 40), ("tib", 1 << 40),
    ]

    /// `512`, `64KiB`, `8M`, `1.5GiB` (every unit a power of 1024), in bytes.
    static func size(_ text: String) -> Int64? {
        let s = Array(text.lowercased().unicodeScalars.filter { $0 != " " })
        guard !s.isEmpty, s.count <= 64 else { return nil }
        var i = 0
        while i < s.count, ("0"..."9").contains(s[i]) || s[i] == "." { i += 1 }
        guard i > 0, let number = Double(String(String.UnicodeScalarView(s[0..<i]))) else { return nil }
        let unit = String(String.UnicodeScalarView(s[i...]))
        guard let factor = sizeUnits.first(where: { $0.0 == unit })?.1 else { return nil }
        let bytes = (number * Double(factor)).rounded(.down)
        guard bytes.isFinite, bytes < 9.0e18 else { return nil }
        return Int64(bytes)
    }

    /// The shortest exact form: `0`, `512`, `64KiB`, `8MiB`, `1GiB`.
    static func formatSize(_ bytes: Int64) -> String {
        guard bytes > 0 else { return "0" }
        for (unit, factor) in [("TiB", Int64(1) << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] where bytes % factor == 0 {
            return "\(bytes / factor)\(unit)"
        }
        return String(bytes)
    }

    static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "yes", "true", "on", "1": return true
        case "no", "false", "off", "0": return false
        default: return nil
        }
    }

    static func formatBoolean(_ value: Bool) -> String { value ? "yes" : "no" }

    /// A case-insensitive match against an enum's raw values (`put` is `PUT`).
    static func choice<T: RawRepresentable & CaseIterable>(_ text: String, as type: T.Type) -> T? where T.RawValue == String {
        T.allCases.first { $0.rawValue.lowercased() == text.lowercased() }
    }

    /// "use PUT or POST", "use raw, multipart or json".
    static func choiceHint<T: RawRepresentable & CaseIterable>(_ type: T.Type) -> String where T.RawValue == String {
        let names = T.allCases.map(\.rawValue)
        guard names.count > 1 else { return "use " + (names.first ?? "") }
        return "use " + names.dropLast().joined(separator: ", ") + " or " + names.last!
    }
}
