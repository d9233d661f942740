/// How much the logger writes (`log_level`): each level includes the ones before it.
package enum LogLevel: String, Sendable, CaseIterable, Comparable {
    case error, warn, info, debug
    private var rank: Int { [.error: 0, .warn: 1, .info: 2, .debug: 3][self]! }
    package static func < (a: LogLevel, b: LogLevel) -> Bool { a.rank < b.rank }

    /// The syslog priority the journal stores a line of this level at (`LOG_ERR` … `LOG_DEBUG`).
    package var syslogPriority: Int {
        switch self {
        case .error: return 3
        case .warn: return 4
        case .info: return 6
        case .debug: return 7
        }
    }
}

/// How log lines look (`log_format`): text for people, one JSON object per line for collectors.
package enum LogFormat: String, Sendable, CaseIterable { case text, json }
