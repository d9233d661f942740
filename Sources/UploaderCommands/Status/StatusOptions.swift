import UploaderConfig

/// What `status` is asked beyond the counts: whether a daemon must run, and the `--check`
/// form's thresholds (Monitoring Plugins style: a value above the warn threshold is a WARNING,
/// above the crit threshold CRITICAL).
package struct StatusOptions: Equatable, Sendable {
    /// `--expect-daemon`: no daemon on a profile is a problem (else only one that died is).
    package var expectDaemon = false
    /// `--check`: one line and exit 0/1/2/3 instead of the table.
    package var check = false
    package var warnQueued: Int?
    package var critQueued: Int?
    /// Seconds the oldest queued file may wait.
    package var warnAge: Double?
    package var critAge: Double?
    /// Failed files: WARNING above 0 unless told otherwise; CRITICAL only when asked.
    package var warnFailed: Int = 0
    package var critFailed: Int?
    /// The threshold options given, in order, for the message that they need `--check`.
    package private(set) var thresholdsGiven: [String] = []

    package init() {}

    static let thresholdOptions: Set<String> = [
        "--warn-queued", "--crit-queued", "--warn-age", "--crit-age", "--warn-failed", "--crit-failed",
    ]

    mutating func set(_ option: String, _ value: String) throws {
        thresholdsGiven.append(option)
        switch option {
        case "--warn-age", "--crit-age":
            guard let seconds = ConfigValue.duration(value) else {
                throw UsageError("\(option) needs a duration (\(ConfigValue.durationHint)), not \"\(value)\"")
            }
            if option == "--warn-age" { warnAge = seconds } else { critAge = seconds }
        default:
            guard let count = Int(value), count >= 0 else {
                throw UsageError("\(option) needs a whole number of files (0 or more), not \"\(value)\"")
            }
            switch option {
            case "--warn-queued": warnQueued = count
            case "--crit-queued": critQueued = count
            case "--warn-failed": warnFailed = count
            default: critFailed = count
            }
        }
    }

    func validate() throws {
        if let warn = warnQueued, let crit = critQueued, warn > crit {
            throw UsageError("--warn-queued \(warn) is above --crit-queued \(crit)")
        }
        if let warn = warnAge, let crit = critAge, warn > crit {
            throw UsageError("--warn-age is above --crit-age")
        }
        if let crit = critFailed, thresholdsGiven.contains("--warn-failed"), warnFailed > crit {
            throw UsageError("--warn-failed \(warnFailed) is above --crit-failed \(crit)")
        }
    }
}
