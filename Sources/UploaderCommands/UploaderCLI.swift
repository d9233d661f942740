import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore
import UploaderDaemon

/// The executable's whole behaviour: parse, then hand each command to its runner.
package enum UploaderCLI {
    /// `clock`: the program's one clock, made here and passed down to everything that reads or
    /// waits on time.
    package static func main(_ arguments: [String], environment: [String: String], clock: any Clock = SystemClock()) -> Int32 {
        // The one place stderr is examined: every logger and error line below follows it.
        let destination = LogDestination.ofStandardError(environment: environment)
        let command: Command
        do {
            command = try ArgumentParser.parse(arguments)
        } catch {
            Daemon.printError("\(error)")
            return Daemon.ExitCode.usage
        }
        switch command {
        case .version:
            print("uploader \(UploaderVersion.string)")
            return 0
        case .help(let name):
            print(HelpText.text(for: name))
            return 0
        case .checkConfig(let config):
            return CheckConfigCommand.run(configPath: ConfigLocation.resolve(config, environment: environment), environment: environment,
                                          errors: Logger(destination: destination))
        case .run(let config, let profiles, let once):
            guard let loaded = load(config, environment, errors: Logger(destination: destination)) else { return Daemon.ExitCode.usage }
            if let refusal = SpoolOwnerIdentity.take(for: selected(loaded.configuration, profiles), command: once ? "run --once" : "run",
                                                     writesBeyondOutbox: true) {
                Daemon.printError(refusal)
                return Daemon.ExitCode.noPermission
            }
            let logger = Logger(level: loaded.configuration.global.logLevel, format: loaded.configuration.global.logFormat,
                                destination: destination, clock: clock)
            return Daemon(loaded: loaded, profileNames: profiles, once: once, logger: logger, environment: environment, clock: clock).run()
        case .status(let config, let profiles, let json):
            guard let loaded = IndexFallback.load(config, environment, errors: Logger(destination: destination)) else { return Daemon.ExitCode.usage }
            return StatusCommand.run(loaded.configuration, profiles: profiles, json: json, now: clock.now)
        case .retry(let config, let profiles, let all, let files):
            guard let loaded = load(config, environment, errors: Logger(destination: destination)) else { return Daemon.ExitCode.usage }
            if let refusal = SpoolOwnerIdentity.take(for: selected(loaded.configuration, profiles), command: "retry", writesBeyondOutbox: true) {
                Daemon.printError(refusal)
                return Daemon.ExitCode.noPermission
            }
            return RetryCommand.run(loaded.configuration, profiles: profiles, all: all, files: files)
        case .enqueue(let config, let profile, let move, let files):
            guard let loaded = IndexFallback.load(config, environment, errors: Logger(destination: destination)) else { return Daemon.ExitCode.usage }
            if let refusal = SpoolOwnerIdentity.take(for: selected(loaded.configuration, [profile]), command: "enqueue", writesBeyondOutbox: false) {
                Daemon.printError(refusal)
                return Daemon.ExitCode.noPermission
            }
            return EnqueueCommand.run(loaded.configuration, profile: profile, move: move, files: files)
        }
    }

    /// The profiles a command names (all when it names none); unknown names are the command's to report.
    static func selected(_ configuration: Configuration, _ names: [String]) -> [Profile] {
        names.isEmpty ? configuration.profiles : configuration.profiles.filter { names.contains($0.name) }
    }

    /// Loads the config or prints its errors (one `PATH:LINE: message` each).
    static func load(_ config: String?, _ environment: [String: String], errors logger: Logger) -> LoadedConfiguration? {
        let path = ConfigLocation.resolve(config, environment: environment)
        switch ConfigLoader.load(path: path, environment: environment) {
        case .success(let loaded): return loaded
        case .failure(let errors):
            for error in errors.errors { logger.plain(.error, error.description) }
            return nil
        }
    }
}

/// Where the config is: --config, else $UPLOADER_CONFIG, else ./uploader.conf, else /etc/uploader/uploader.conf.
package enum ConfigLocation {
    package static func resolve(_ explicit: String?, environment: [String: String]) -> String {
        if let explicit { return explicit }
        if let fromEnv = environment["UPLOADER_CONFIG"], !fromEnv.isEmpty { return fromEnv }
        if FileManager.default.fileExists(atPath: "uploader.conf") { return "uploader.conf" }
        return "/etc/uploader/uploader.conf"
    }
}

/// `uploader check-config`. Its errors and warnings go through `errors` (a logger that only
/// adds the journal's priority), so the `check-config` of a unit's `ExecReload=` files them
/// in the journal as errors and warnings.
enum CheckConfigCommand {
    static func run(configPath: String, environment: [String: String], errors logger: Logger) -> Int32 {
        switch ConfigLoader.load(path: configPath, environment: environment) {
        case .failure(let errors):
            for error in errors.errors { logger.plain(.error, error.description) }
            return Daemon.ExitCode.usage
        case .success(let loaded):
            // Each warning already reads `PATH:LINE: warning: …`.
            for warning in loaded.warnings { logger.plain(.warn, warning) }
            print(effectiveConfigText(loaded.configuration), terminator: "")
            return 0
        }
    }
}
