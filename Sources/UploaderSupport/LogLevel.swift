/// How much the logger writes (`log_level`): each level includes the ones before it.
package enum LogLevel: String, Sendable, CaseIterable, Comparable {
    case error, warn, info, debug
    private var rank: Int { [.error: 0, .warn: 1, .info: 2, .debug: 3][self]! }
    package static func < (a: LogLevel, b: LogLevel) -> Bool { a.rank < b.rank }
}

/// How log lines look (`log_format`): text for people, one JSON object per line for collectors.
package enum LogFormat: String, Sendable, CaseIterable { case text, json }
