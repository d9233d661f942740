import Foundation

/// The options of DESIGN §8 and §9 a schedule draws beside the ones `SimConfig` always writes:
/// hooks, upload windows, `max_rate`, `after_send`, the retention of sent/ and the periodic rescan — each in some
/// schedules, as INI lines for production's loader.
extension SimConfig {
    /// The hooks' commands, names looked up in PATH when spawned (so the loader does not look for
    /// them on this machine): the simulated machine runs each as `SimHookHost` says.
    static let onSentCommand = "sim-on-sent"
    static let onFailedCommand = "sim-on-failed"

    /// A schedule starts at 08:00 UTC (the simulated machine's zone): windows and timetables are
    /// drawn around the first minutes, with the next day's opening for what is left after.
    static func optionLines(_ choices: ChoiceSource) -> [String] {
        var lines: [String] = []
        if choices.chance(35) {
            if choices.chance(80) { lines.append("on_sent = \(onSentCommand)") }
            if choices.chance(70) { lines.append("on_failed = \(onFailedCommand)") }
            lines.append("hook_timeout = \(1 + choices.below(5))s")
        }
        if choices.chance(25) { lines.append("upload_window = \(windows(choices))") }
        if choices.chance(20) { lines.append("max_rate = \(rate(choices))") }
        if choices.chance(15) {
            lines.append("after_send = delete")
        } else {
            if choices.chance(15) { lines.append("keep_sent = \(5 + choices.below(116))s") }
            if choices.chance(15) { lines.append("keep_sent_bytes = \(300 + choices.below(3000))") }
        }
        // Production's periodic rescan, a job of the owner's (`rescan` effect) on the workers.
        if choices.chance(15) { lines.append("rescan = \(1 + choices.below(60))s") }
        return lines
    }

    private static func clock(_ minutes: Int) -> String {
        let m = (minutes + 1440) % 1440
        return String(format: "%02d:%02d", m / 60, m % 60)
    }

    /// One or two spans near 08:00 (the first may be open at the start), a longer one after, now and
    /// then one wrapping midnight.
    private static func windows(_ choices: ChoiceSource) -> String {
        let eight = 8 * 60
        let start = eight - 2 + choices.below(6)
        let end = start + 1 + choices.below(4)
        var spans = ["\(clock(start))-\(clock(end))"]
        if choices.chance(50) {
            let second = end + 1 + choices.below(3)
            spans.append("\(clock(second))-\(clock(second + 1 + choices.below(10)))")
        }
        if choices.chance(20) { spans.insert("22:00-\(clock(eight - 3 - choices.below(5)))", at: 0) }
        // A later, longer one: what is left once the faults stop goes within the hour, not the next
        // day (the end of a schedule has only so many steps, and a pass over sent/ every few seconds
        // takes some of them).
        let later = eight + 15 + choices.below(10)
        spans.append("\(clock(later))-\(clock(later + 30 + choices.below(60)))")
        return spans.joined(separator: " ")
    }

    /// A plain cap, or a timetable switching in the first minutes (and `off` in some entries).
    private static func rate(_ choices: ChoiceSource) -> String {
        let sizes = ["256", "1KiB", "4KiB", "64KiB", "off"]
        guard choices.chance(50) else { return sizes[choices.below(sizes.count - 1)] }
        var minute = 8 * 60 - choices.below(3)
        var entries: [String] = []
        for _ in 0..<(2 + choices.below(2)) {
            entries.append("\(clock(minute)),\(sizes[choices.below(sizes.count)])")
            minute += 1 + choices.below(4)
        }
        return entries.joined(separator: " ")
    }
}
