import UploaderSupport

/// Reads `uploader.conf` into a validated `Configuration`, or every error found in it.
package enum ConfigLoader {
    /// Config files are small; a bigger one is a mistake (wrong path), not a config.
    static let maxConfigBytes = 1 << 20

    /// Reads and validates the file at `path` (as given, used in every message).
    /// - Parameter secrets: `.skip` for commands that never use a secret (status, enqueue, retry).
    /// - Parameter serviceUser: who the access checks take for the service user, given the spool
    ///   roots: the machine's answer by default (`LocalUser.service`), a fixed one in tests.
    package static func load(path: String, environment: [String: String], secrets: SecretReading = .read,
                             serviceUser: ([String]) -> LocalUser? = LocalUser.service(spoolRoots:)) -> Result<LoadedConfiguration, ConfigErrors> {
        switch ConfigFiles.read(path, limit: maxConfigBytes) {
        case .failure(let failure):
            return .failure(ConfigErrors([ConfigError(path: path, line: nil, message: "cannot read config: \(failure.reason)")]))
        case .success(let contents):
            let text = String(decoding: contents.bytes, as: UTF8.self)
            return parse(text: text, path: path, environment: environment, fileMode: contents.mode, secrets: secrets,
                         serviceUser: serviceUser)
        }
    }

    /// Validates config `text` as if read from `path` (relative paths resolve against its directory).
    /// - Parameter fileMode: the file's permission bits when read from disk (then a secret written in it
    ///   is checked for who else can read the file).
    package static func parse(
        text: String, path: String, environment: [String: String], fileMode: UInt32? = nil, secrets: SecretReading = .read,
        serviceUser: ([String]) -> LocalUser? = LocalUser.service(spoolRoots:)
    ) -> Result<LoadedConfiguration, ConfigErrors> {
        var diagnostics = ConfigDiagnostics(path: path)
        let baseDirectory = ConfigFiles.directory(of: path)
        let credentials = environment["CREDENTIALS_DIRECTORY"].flatMap { $0.isEmpty ? nil : $0 }
        let document = IniLexer.lex(text, environment: environment, secrets: secrets, diagnostics: &diagnostics)

        var global = GlobalSettings()
        if let section = document.global {
            var reader = SectionReader(section: section, baseDirectory: baseDirectory, diagnostics: diagnostics)
            reader.rejectUnknownKeys()
            global.logLevel = reader.choice("log_level", default: global.logLevel)
            global.logFormat = reader.choice("log_format", default: global.logFormat)
            global.metricsFile = reader.path("metrics_file", allowEmpty: true)
            global.index = reader.path("index", allowEmpty: true)
            diagnostics = reader.diagnostics
        }

        var profiles: [Profile] = []
        for section in document.profiles {
            guard case .outbox(let name) = section.kind else { continue }
            if let profile = ProfileBuilder.build(section, name: name, baseDirectory: baseDirectory, secrets: secrets,
                                                  credentialsDirectory: credentials,
                                                 diagnostics: &diagnostics) {
                profiles.append(profile)
            }
        }
        if document.profiles.isEmpty, diagnostics.errors.isEmpty {
            diagnostics.error(nil, "no [outbox NAME] section: nothing to upload")
        }
        SpoolLayoutCheck.check(profiles, sections: document.profiles, diagnostics: &diagnostics)

        guard diagnostics.errors.isEmpty else { return .failure(ConfigErrors(diagnostics.sortedErrors, logFormat: global.logFormat)) }
        // Who else may read a secret, and whether the service can use its spools, matter to the
        // commands that read secrets (`run`, `check-config`); a producer's `status` is not told.
        if secrets == .read {
            let service = serviceUser(profiles.map(\.spool.root))
            SecretExposure.warnings(document.profiles, configPath: path, checkConfigFile: fileMode != nil, baseDirectory: baseDirectory,
                                    credentialsDirectory: credentials, service: service, diagnostics: &diagnostics)
            SpoolAccessCheck.warnings(profiles, service: service, diagnostics: &diagnostics)
        }
        let configuration = Configuration(path: path, global: global, profiles: profiles)
        return .success(LoadedConfiguration(configuration: configuration, warnings: diagnostics.warnings))
    }
}
