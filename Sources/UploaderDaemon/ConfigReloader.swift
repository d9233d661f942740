import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore

/// SIGHUP: re-reads the config and applies it, or keeps the running one when it is invalid.
///
/// New profiles start, removed ones stop (draining for their grace), changed ones stop and
/// start again with the new settings; unchanged ones keep running, told that the credentials may
/// have changed (a profile paused for refused credentials tries a file at once). Secrets in files
/// are read again with the config, so a rotated token counts as a change. A change to a
/// credentials file (`CredentialsWatch`) reloads the same way.
package struct ConfigReloader: Sendable {
    let path: String
    let profileNames: [String]
    let environment: [String: String]
    let factory: RunnerFactory
    let reporter: ServiceReporter
    let logger: Logger

    package init(path: String, profileNames: [String], environment: [String: String],
                 factory: RunnerFactory, reporter: ServiceReporter, logger: Logger) {
        self.path = path
        self.profileNames = profileNames
        self.environment = environment
        self.factory = factory
        self.reporter = reporter
        self.logger = logger
    }

    /// Returns the runners running afterwards (the same ones when the new config is refused).
    /// `cause` opens the log line: `SIGHUP`, or which credentials file changed.
    package func reload(_ current: [ProfileRunner], cause: String = "SIGHUP") -> [ProfileRunner] {
        logger.info("\(cause): reloading configuration", ["config": path])
        let loaded: LoadedConfiguration
        switch ConfigLoader.load(path: path, environment: environment) {
        case .failure(let errors):
            for error in errors.errors { logger.error(error.description) }
            logger.error("configuration not reloaded; the running one stays", ["config": path, "errors": String(errors.errors.count)])
            return current
        case .success(let result):
            loaded = result
        }
        let config = loaded.configuration
        if let unknown = profileNames.first(where: { name in !config.profiles.contains { $0.name == name } }) {
            logger.error("\(path): no profile named \"\(unknown)\" (selected with --profile); configuration not reloaded")
            return current
        }
        let selected = profileNames.isEmpty ? config.profiles : config.profiles.filter { profileNames.contains($0.name) }
        logger.configure(level: config.global.logLevel, format: config.global.logFormat, secrets: config.secretValues)
        for warning in loaded.warnings { logger.warn(warning) }

        let running = Dictionary(current.map { ($0.profile.name, $0) }, uniquingKeysWith: { first, _ in first })
        let wanted = Set(selected.map(\.name))
        var retire = current.filter { !wanted.contains($0.profile.name) }
        var toStart: [Profile] = []
        for profile in selected {
            if let runner = running[profile.name] {
                if Self.sameSettings(runner.profile, profile) {
                    runner.credentialsMayHaveChanged()
                    continue
                }
                retire.append(runner)
            }
            toStart.append(profile)
        }
        factory.stop(retire)
        var started: [String: ProfileRunner] = [:]
        for profile in toStart {
            do {
                started[profile.name] = try factory.start(profile, hooks: running[profile.name]?.hooks,
                                                          memory: running[profile.name]?.destinationMemory)
            } catch {
                logger.error("profile \(profile.name): cannot start after reload: \(error)", ["profile": profile.name])
            }
        }
        let retired = Set(retire.map(ObjectIdentifier.init))
        let now = selected.compactMap { profile in
            started[profile.name] ?? running[profile.name].flatMap { retired.contains(ObjectIdentifier($0)) ? nil : $0 }
        }
        let removed = retire.map(\.profile.name).filter { !wanted.contains($0) }
        let restarted = retire.map(\.profile.name).filter { wanted.contains($0) }
        let added = toStart.map(\.name).filter { running[$0] == nil }
        logger.info("configuration reloaded", ["config": path, "started": added.joined(separator: ","),
                                               "restarted": restarted.joined(separator: ","), "stopped": removed.joined(separator: ","),
                                               "unchanged": String(current.count - retire.count)])
        reporter.update(runners: now, retired: retire, global: config.global)
        ProfileIndex.publish(config, logger: logger)
        return now
    }

    /// Same effective settings (as check-config prints them) and the same secret values.
    package static func sameSettings(_ a: Profile, _ b: Profile) -> Bool {
        func text(_ p: Profile) -> String {
            effectiveConfigText(Configuration(path: "", global: GlobalSettings(), profiles: [p]))
        }
        return text(a) == text(b) && a.secretValues == b.secretValues
    }
}
