/// Numbers for log lines, without `String(format:)` (these run once per file).
package enum LogNumbers {
    /// `value` with `places` decimals.
    package static func fixed(_ value: Double, places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = Int64((max(0, value) * scale).rounded())
        let whole = scaled / Int64(scale)
        guard places > 0 else { return String(whole) }
        let fraction = String(scaled % Int64(scale))
        return "\(whole)." + String(repeating: "0", count: places - fraction.count) + fraction
    }

    /// `12.3MiB/s` or `512.0KiB/s`; `-` when no time passed.
    package static func rate(_ bytes: Int64, _ seconds: Double) -> String {
        guard seconds > 0 else { return "-" }
        let perSecond = Double(bytes) / seconds
        if perSecond >= Double(1 << 20) { return fixed(perSecond / Double(1 << 20), places: 1) + "MiB/s" }
        return fixed(perSecond / 1024, places: 1) + "KiB/s"
    }
}
