import Foundation
import UploaderSupport

/// Typed access to one section's entries; every bad value becomes one `PATH:LINE:` error.
struct SectionReader {
    let section: IniSection
    /// The config file's directory, against which relative paths resolve.
    let baseDirectory: String
    var diagnostics: ConfigDiagnostics
    /// `$CREDENTIALS_DIRECTORY` (systemd's `LoadCredential=`): a relative secret path is looked up there first.
    let credentialsDirectory: String?
    private let byKey: [String: IniEntry]

    init(section: IniSection, baseDirectory: String, diagnostics: ConfigDiagnostics, credentialsDirectory: String? = nil) {
        self.section = section
        self.baseDirectory = baseDirectory
        self.credentialsDirectory = credentialsDirectory
        self.diagnostics = diagnostics
        var byKey: [String: IniEntry] = [:]
        for entry in section.entries where byKey[entry.key] == nil { byKey[entry.key] = entry }
        self.byKey = byKey
    }

    /// Reports every key this section does not know, with a did-you-mean.
    mutating func rejectUnknownKeys() {
        for entry in section.entries where !ConfigKeys.isKnown(entry.key, in: section.kind) {
            diagnostics.error(entry.line, ConfigKeys.unknownKeyMessage(entry.key, in: section))
        }
    }

    /// The entry for `key`, valid or not (for presence checks and line numbers).
    func entry(_ key: String) -> IniEntry? { byKey[key] }

    /// The value of `key`; nil if absent or already reported as unreadable.
    func text(_ key: String) -> String? {
        guard let entry = byKey[key], entry.isValid else { return nil }
        return entry.value
    }

    func line(_ key: String) -> Int { byKey[key]?.line ?? section.line }

    /// Reports a required key that is missing, at the section header's line.
    mutating func require(_ key: String) -> Bool {
        guard byKey[key] == nil else { return true }
        diagnostics.error(section.line, "missing required key \"\(key)\" in \(section.title)")
        return false
    }

    /// Parses `key` with `parse`; an unparsable value is reported as `invalid KIND "VALUE" for KEY (HINT)`.
    mutating func value<T>(_ key: String, kind: String, hint: String, _ parse: (String) -> T?) -> T? {
        guard let entry = byKey[key], entry.isValid else { return nil }
        if let parsed = parse(entry.value) { return parsed }
        let shown = ConfigKeys.secretKeys.contains(key) ? "" : quotedForMessage(entry.shown) + " "
        diagnostics.error(entry.line, "invalid \(kind) \(shown)for \(key) (\(hint))")
        return nil
    }

    mutating func duration(_ key: String, default fallback: TimeInterval, positive: Bool = false) -> TimeInterval {
        guard let value = value(key, kind: "duration", hint: ConfigValue.durationHint, ConfigValue.duration) else { return fallback }
        if positive && value <= 0 {
            diagnostics.error(line(key), "\(key) must be more than 0 (\(ConfigValue.durationHint))")
            return fallback
        }
        return value
    }

    mutating func boolean(_ key: String, default fallback: Bool) -> Bool {
        value(key, kind: "boolean", hint: ConfigValue.booleanHint, ConfigValue.boolean) ?? fallback
    }

    mutating func choice<T: RawRepresentable & CaseIterable>(_ key: String, default fallback: T) -> T where T.RawValue == String {
        value(key, kind: "value", hint: ConfigValue.choiceHint(T.self)) { ConfigValue.choice($0, as: T.self) } ?? fallback
    }

    mutating func integer(_ key: String, default fallback: Int, in range: ClosedRange<Int>) -> Int {
        let hint = "use a whole number from \(range.lowerBound) to \(range.upperBound)"
        return value(key, kind: "number", hint: hint) { text in
            Int(text).flatMap { range.contains($0) ? $0 : nil }
        } ?? fallback
    }

    /// A size within `range`; out of range is reported as `KEY must be from MIN to MAX`.
    mutating func size(_ key: String, default fallback: Int64, in range: ClosedRange<Int64>) -> Int64 {
        guard let value = value(key, kind: "size", hint: ConfigValue.sizeHint, ConfigValue.size) else { return fallback }
        guard range.contains(value) else {
            diagnostics.error(line(key), "\(key) must be from \(ConfigValue.formatSize(range.lowerBound)) to \(ConfigValue.formatSize(range.upperBound))")
            return fallback
        }
        return value
    }

    /// An absolute path, or nil when absent, empty (if allowed) or already reported.
    mutating func path(_ key: String, allowEmpty: Bool = false) -> String? {
        guard let value = text(key) else { return nil }
        if value.isEmpty {
            if !allowEmpty { diagnostics.error(line(key), "\(key) must not be empty") }
            return nil
        }
        if ConfigKeys.isSecretFile(key) {
            return ConfigFiles.secretPath(value, relativeTo: baseDirectory, credentialsDirectory: credentialsDirectory)
        }
        return ConfigFiles.resolve(value, relativeTo: baseDirectory)
    }

    /// A path that must name a readable file now (`ca_file`, `client_cert`, ...); empty means unset.
    mutating func readablePath(_ key: String) -> String? {
        guard let path = path(key, allowEmpty: true) else { return nil }
        if let problem = ConfigFiles.accessProblem(path, .read) {
            diagnostics.error(line(key), "cannot read \(key) \(path): \(problem)")
            return nil
        }
        return path
    }
}
