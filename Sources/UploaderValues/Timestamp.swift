import Foundation

/// RFC 3339 UTC timestamps with milliseconds, the only time format in manifests and logs.
package enum Timestamp {
    package static func format(_ date: Date) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(ms >= 0 ? ms / 1000 : (ms - 999) / 1000)
        let millis = Int(ms - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let year = Int(parts.tm_year) + 1900
        guard (0...9999).contains(year) else {
            return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                          Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), millis)
        }
        // Digits by hand: String(format:) went through CFString and was ~4 % of the CPU
        // of a 4 KiB upload (several timestamps per manifest write).
        var text = [UInt8](repeating: UInt8(ascii: "0"), count: 24)
        func put(_ value: Int, at end: Int, width: Int) {
            var v = value
            for i in stride(from: end, to: end - width, by: -1) {
                text[i] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
            }
        }
        put(year, at: 3, width: 4)
        text[4] = UInt8(ascii: "-")
        put(Int(parts.tm_mon) + 1, at: 6, width: 2)
        text[7] = UInt8(ascii: "-")
        put(Int(parts.tm_mday), at: 9, width: 2)
        text[10] = UInt8(ascii: "T")
        put(Int(parts.tm_hour), at: 12, width: 2)
        text[13] = UInt8(ascii: ":")
        put(Int(parts.tm_min), at: 15, width: 2)
        text[16] = UInt8(ascii: ":")
        put(Int(parts.tm_sec), at: 18, width: 2)
        text[19] = UInt8(ascii: ".")
        put(millis, at: 22, width: 3)
        text[23] = UInt8(ascii: "Z")
        return String(decoding: text, as: UTF8.self)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS(.fff)Z`; nil for anything else.
    package static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= bytes.count else { return nil }
            var value = 0
            for b in bytes[from..<(from + count)] {
                guard b >= 48, b <= 57 else { return nil }
                value = value * 10 + Int(b - 48)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2)
        else { return nil }
        var fraction = 0.0
        if bytes[19] == UInt8(ascii: ".") {
            let digits = bytes[20..<(bytes.count - 1)]
            guard !digits.isEmpty, let value = number(20, digits.count) else { return nil }
            fraction = Double(value) / pow(10, Double(digits.count))
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// UTC `YYYY-MM-DD`, for the `{date}` template.
    package static func day(_ date: Date) -> String {
        String(format(date).prefix(10))
    }
}
