import Foundation
import Synchronization

/// The daemon's logger: one line per event on stderr, as text or JSON, with dotted metadata keys.
///
/// Shaped like swift-log but small. Passed into every component (no global), thread-safe,
/// and it scrubs every registered secret from each line before it is written. Lines for the
/// journal (`LogDestination.journal`) start with their priority and carry no time of their own.
package final class Logger: Sendable {
    package typealias Metadata = KeyValuePairs<String, String>

    /// What a reload may change, and what `warnOnce` remembers: the one mutable part.
    private struct Settings {
        var level: LogLevel
        var format: LogFormat
        var secrets: [String] = []
        /// Keys `warnOnce` has already warned about.
        var warned: Set<String> = []
    }

    private let settings: Mutex<Settings>
    private let sink: @Sendable (String) -> Void
    private let clock: any Clock
    /// Where the sink's lines end up; fixed for the process (stderr does not change).
    package let destination: LogDestination

    package init(level: LogLevel = .info, format: LogFormat = .text, destination: LogDestination = .stream,
                 clock: any Clock = SystemClock(), sink: @escaping @Sendable (String) -> Void = Logger.standardError) {
        settings = Mutex(Settings(level: level, format: format))
        self.destination = destination
        self.clock = clock
        self.sink = sink
    }

    package static let standardError: @Sendable (String) -> Void = { line in
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        bytes.withUnsafeBytes { raw in
            do {
                try LocalFileSystem().writeAll(raw, to: .standardError, path: "standard error")
            } catch {
                // A log line standard error refuses has nowhere else to go.
            }
        }
    }

    package func configure(level: LogLevel, format: LogFormat, secrets: [String]) {
        settings.withLock { settings in
            settings.level = level
            settings.format = format
            settings.secrets = secrets.filter { $0.count >= 1 }
        }
    }

    package func isEnabled(_ messageLevel: LogLevel) -> Bool {
        settings.withLock { messageLevel <= $0.level }
    }

    package func error(_ message: @autoclosure () -> String, _ metadata: Metadata = [:]) { log(.error, message(), metadata) }
    package func warn(_ message: @autoclosure () -> String, _ metadata: Metadata = [:]) { log(.warn, message(), metadata) }
    package func info(_ message: @autoclosure () -> String, _ metadata: Metadata = [:]) { log(.info, message(), metadata) }
    package func debug(_ message: @autoclosure () -> String, _ metadata: Metadata = [:]) { log(.debug, message(), metadata) }

    /// `warn`, but only the first time for `key` in this process: for a problem every pass meets
    /// again (a directory that cannot be listed), where one line per pass would drown the log.
    package func warnOnce(key: String, _ message: @autoclosure () -> String, _ metadata: Metadata = [:]) {
        let first = settings.withLock { $0.warned.insert(key).inserted }
        if first { log(.warn, message(), metadata) }
    }

    package func log(_ messageLevel: LogLevel, _ message: String, _ metadata: Metadata) {
        log(messageLevel, message, pairs: metadata.map { ($0.key, $0.value) })
    }

    /// The same, with metadata built at run time (lines decided by the core).
    package func log(_ messageLevel: LogLevel, _ message: String, pairs metadata: [(String, String)]) {
        let enabled: (format: LogFormat, secrets: [String])? = settings.withLock { settings in
            messageLevel <= settings.level ? (settings.format, settings.secrets) : nil
        }
        guard let (format, secrets) = enabled else { return }
        // journald stamps each line itself: a second, different time would only mislead.
        let time = destination == .journal ? nil : Timestamp.format(clock.now)
        var line = destination.prefix(messageLevel)
        switch format {
        case .text:
            // Control characters only: paths arrive already escaped (`logSafe`), and escaping
            // their backslashes again would show `new\\nline` for a name with a line break.
            if let time { line += time + " " }
            line += "\(messageLevel.rawValue.uppercased()) \(LogEscaping.escape(message, backslashes: false))"
            for (key, value) in metadata {
                line += " \(key)=\(Logger.quoteIfNeeded(LogEscaping.escape(value, backslashes: false)))"
            }
        case .json:
            line += Self.jsonObject(time: time, level: messageLevel, message: message, metadata)
        }
        write(line, secrets: secrets)
    }

    /// `{"time":…,"level":…,"msg":…, fields…}`: the fields `LogFields.numeric` names as JSON
    /// numbers, every other value a string.
    private static func jsonObject(time: String?, level: LogLevel, message: String, _ metadata: [(String, String)]) -> String {
        var object = "{"
        if let time { object += "\"time\":" + JSONText.quote(time) + "," }
        object += "\"level\":" + JSONText.quote(level.rawValue) + ",\"msg\":" + JSONText.quote(message)
        for (key, value) in metadata {
            let number = LogFields.numeric.contains(key) && LogFields.isJSONNumber(value)
            object += "," + JSONText.quote(key) + ":" + (number ? value : JSONText.quote(value))
        }
        return object + "}"
    }

    /// A line that is not a log event — a configuration error, a start-up failure — written
    /// whatever the level: as it is in the text format (with only the journal's priority before
    /// it), and as an object with `time`, `level` and `msg` in the JSON format, so that every line
    /// of a daemon logging JSON parses.
    package func plain(_ level: LogLevel, _ text: String) {
        let (format, secrets) = settings.withLock { ($0.format, $0.secrets) }
        switch format {
        case .text:
            write(destination.prefix(level) + text, secrets: secrets)
        case .json:
            let time = destination == .journal ? nil : Timestamp.format(clock.now)
            write(destination.prefix(level) + Self.jsonObject(time: time, level: level, message: text, []), secrets: secrets)
        }
    }

    private func write(_ line: String, secrets: [String]) {
        var line = line
        for secret in secrets where line.utf8.firstRange(of: secret.utf8) != nil {
            line = line.replacingOccurrences(of: secret, with: "<redacted>")
        }
        sink(line)
    }

    /// A value with a space, a quote or `=` (or none at all) goes in quotes. The bytes are
    /// scanned directly: Foundation's `contains` on a String bridges to NSString, and made the
    /// "sent" line of each file the costliest thing the owner did.
    static func quoteIfNeeded(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.utf8.contains { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "=") }
        guard needsQuotes else { return value }
        var quoted = "\""
        for character in value.unicodeScalars {
            if character == "\"" { quoted += "\\" }
            quoted.unicodeScalars.append(character)
        }
        return quoted + "\""
    }
}
