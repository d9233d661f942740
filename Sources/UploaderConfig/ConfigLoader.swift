import UploaderSupport

/// Reads `uploader.conf` into a validated `Configuration`, or every error found in it.
package enum ConfigLoader {
    /// Config files are small; a bigger one is a mistake (wrong path), not a config.
    static let maxConfigBytes = 1 << 20

    /// Reads and validates the file at `path` (as given, used in every message).
    /// - Parameter secrets: `.skip` for commands that never use a secret (status, enqueue, retry).
    package static func load(path: String, environment: [String: String],
                             secrets: SecretReading = .read) -> Result<LoadedConfiguration, ConfigErrors> {
        switch ConfigFiles.read(path, limit: maxConfigBytes) {
        case .failure(let failure):
            return .failure(ConfigErrors([ConfigError(path: path, line: nil, message: "cannot read config: \(failure.reason)")]))
        case .success(let contents):
            let text = String(decoding: contents.bytes, as: UTF8.self)
            return parse(text: text, path: path, environment: environment, fileMode: contents.mode, secrets: secrets)
        }
    }

    /// Validates config `text` as if read from `path` (relative paths resolve against its directory).
    /// - Parameter fileMode: the file's permission bits, to warn when an inline secret is readable by others.
    package static func parse(
        text: String, path: String, environment: [String: String], fileMode: UInt32? = nil, secrets: SecretReading = .read
    ) -> Result<LoadedConfiguration, ConfigErrors> {
        var diagnostics = ConfigDiagnostics(path: path)
        let baseDirectory = ConfigFiles.directory(of: path)
        let document = IniLexer.lex(text, environment: environment, secrets: secrets, diagnostics: &diagnostics)

        var global = GlobalSettings()
        if let section = document.global {
            var reader = SectionReader(section: section, baseDirectory: baseDirectory, diagnostics: diagnostics)
            reader.rejectUnknownKeys()
            global.logLevel = reader.choice("log_level", default: global.logLevel)
            global.logFormat = reader.choice("log_format", default: global.logFormat)
            global.metricsFile = reader.path("metrics_file", allowEmpty: true)
            diagnostics = reader.diagnostics
        }

        var profiles: [Profile] = []
        for section in document.profiles {
            guard case .outbox(let name) = section.kind else { continue }
            if let profile = ProfileBuilder.build(section, name: name, baseDirectory: baseDirectory, secrets: secrets,
                                                 diagnostics: &diagnostics) {
                profiles.append(profile)
            }
        }
        if document.profiles.isEmpty, diagnostics.errors.isEmpty {
            diagnostics.error(nil, "no [outbox NAME] section: nothing to upload")
        }
        SpoolLayoutCheck.check(profiles, sections: document.profiles, diagnostics: &diagnostics)

        guard diagnostics.errors.isEmpty else { return .failure(ConfigErrors(diagnostics.sortedErrors, logFormat: global.logFormat)) }
        if let mode = fileMode, mode & 0o044 != 0 {
            let inline = document.profiles.flatMap(\.entries).filter { ConfigKeys.secretKeys.contains($0.key) }
            if let first = inline.first {
                diagnostics.warning(nil, "holds an inline secret (\(first.key) on line \(first.line)) but is readable by group or others (mode \(octal(mode))); chmod 600 it, or use \(first.key)_file")
            }
        }
        let configuration = Configuration(path: path, global: global, profiles: profiles)
        return .success(LoadedConfiguration(configuration: configuration, warnings: diagnostics.warnings))
    }
}

/// `0644`-style octal for messages.
private func octal(_ mode: UInt32) -> String {
    let digits = String(mode, radix: 8)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
