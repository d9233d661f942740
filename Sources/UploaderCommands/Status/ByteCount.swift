import Foundation

/// Human-readable sizes, rates, durations and counts for `status`.
enum ByteCount {
    static func format(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }

    static func duration(_ seconds: Double) -> String {
        if seconds < 120 { return String(format: "%.0fs", seconds) }
        if seconds < 7200 { return String(format: "%.0fm", seconds / 60) }
        if seconds < 172800 { return String(format: "%.1fh", seconds / 3600) }
        return String(format: "%.1fd", seconds / 86400)
    }

    /// `0 files`, `1 file`, `2 files`.
    static func files(_ n: Int) -> String { n == 1 ? "1 file" : "\(n) files" }
}
