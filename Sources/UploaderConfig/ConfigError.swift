import UploaderSupport

/// One problem found in a config file, printed as `PATH:LINE: message` (or `PATH: message`).
package struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    package var path: String
    /// 1-based line, or nil for a problem with the file as a whole (unreadable, too large).
    package var line: Int?
    package var message: String

    package init(path: String, line: Int?, message: String) {
        self.path = path
        self.line = line
        self.message = message
    }

    package var description: String {
        if let line { return "\(path):\(line): \(message)" }
        return "\(path): \(message)"
    }
}

/// Every problem found in one load, so an operator fixes them all in one pass.
package struct ConfigErrors: Error, Sendable, CustomStringConvertible {
    package var errors: [ConfigError]
    /// The `log_format` the file asks for, as far as it could be read (text when unreadable):
    /// the daemon writes these errors in it.
    package var logFormat: LogFormat

    package init(_ errors: [ConfigError], logFormat: LogFormat = .text) {
        self.errors = errors
        self.logFormat = logFormat
    }

    /// One error per line, in file order.
    package var description: String { errors.map(\.description).joined(separator: "\n") }
}

/// A validated configuration plus the warnings found while loading it (e.g. a world-readable inline secret).
package struct LoadedConfiguration: Sendable {
    package var configuration: Configuration
    /// Each warning a single line, prefixed `PATH:` or `PATH:LINE:` like errors.
    package var warnings: [String]

    package init(configuration: Configuration, warnings: [String]) {
        self.configuration = configuration
        self.warnings = warnings
    }
}

/// Collects errors and warnings for one config file while it is parsed and validated.
struct ConfigDiagnostics {
    let path: String
    private(set) var errors: [ConfigError] = []
    private(set) var warnings: [String] = []

    init(path: String) { self.path = path }

    mutating func error(_ line: Int?, _ message: String) {
        errors.append(ConfigError(path: path, line: line, message: message))
    }

    mutating func warning(_ line: Int?, _ message: String) {
        warnings.append(ConfigError(path: path, line: line, message: "warning: " + message).description)
    }

    /// Errors in file order (file-level first); stable for errors on the same line.
    var sortedErrors: [ConfigError] {
        errors.enumerated().sorted { a, b in
            let la = a.element.line ?? 0, lb = b.element.line ?? 0
            return la != lb ? la < lb : a.offset < b.offset
        }.map(\.element)
    }
}

/// Shows a user's value inside a message: quoted, control characters escaped, long values cut.
func quotedForMessage(_ value: String, limit: Int = 80) -> String {
    var out = "\""
    var count = 0
    for scalar in value.unicodeScalars {
        if count >= limit { out += "…"; break }
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\t": out += "\\t"
        default:
            if scalar.value < 0x20 || scalar.value == 0x7F {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        count += 1
    }
    return out + "\""
}
