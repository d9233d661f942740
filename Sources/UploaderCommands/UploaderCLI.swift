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
            // A monitoring check called wrongly is UNKNOWN, as the Monitoring Plugins guidelines say.
            if arguments.first == "status", arguments.contains("--check") {
                print(MonitoringCheck.unknownLine("\(error)"))
                return MonitoringCheck.Verdict.unknown.exitCode
            }
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
                                          errors: Logger(destination: destination, clock: clock))
        case .run(let config, let profiles, let once):
            // Text until the config names its log_format; from then on every line is in that format.
            let logger = Logger(destination: destination, clock: clock)
            guard let loaded = load(config, environment, secrets: .read, errors: logger, inItsLogFormat: true) else {
                return Daemon.ExitCode.config
            }
            let global = loaded.configuration.global
            logger.configure(level: global.logLevel, format: global.logFormat, secrets: loaded.configuration.secretValues)
            if let refusal = SpoolOwnerIdentity.take(for: selected(loaded.configuration, profiles), command: once ? "run --once" : "run",
                                                     writesBeyondOutbox: true) {
                logger.plain(.error, "uploader: " + refusal)
                return Daemon.ExitCode.noPermission
            }
            return Daemon(loaded: loaded, profileNames: profiles, once: once, logger: logger, environment: environment, clock: clock).run()
        case .status(let config, let profiles, let json, let options):
            guard let loaded = IndexFallback.load(config, environment, errors: Logger(destination: destination)) else {
                guard options.check else { return Daemon.ExitCode.config }
                print(MonitoringCheck.unknownLine("configuration error in \(ConfigLocation.resolve(config, environment: environment)) (see stderr)"))
                return MonitoringCheck.Verdict.unknown.exitCode
            }
            return StatusCommand.run(loaded.configuration, profiles: profiles, json: json, options: options, now: clock.now)
        case .retry(let config, let profiles, let all, let files):
            guard let loaded = load(config, environment, secrets: .skip, errors: Logger(destination: destination)) else {
                return Daemon.ExitCode.config
            }
            if let refusal = SpoolOwnerIdentity.take(for: selected(loaded.configuration, profiles), command: "retry", writesBeyondOutbox: true) {
                Daemon.printError(refusal)
                return Daemon.ExitCode.noPermission
            }
            return RetryCommand.run(loaded.configuration, profiles: profiles, all: all, files: files)
        case .enqueue(let config, let profile, let move, let files):
            guard let loaded = IndexFallback.load(config, environment, errors: Logger(destination: destination)) else {
                return Daemon.ExitCode.config
            }
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
    /// - Parameter inItsLogFormat: `run`: the errors follow the `log_format` the file asks for.
    static func load(_ config: String?, _ environment: [String: String], secrets: SecretReading, errors logger: Logger,
                     inItsLogFormat: Bool = false) -> LoadedConfiguration? {
        let path = ConfigLocation.resolve(config, environment: environment)
        switch ConfigLoader.load(path: path, environment: environment, secrets: secrets) {
        case .success(let loaded): return loaded
        case .failure(let errors):
            if inItsLogFormat { logger.configure(level: .info, format: errors.logFormat, secrets: []) }
            for error in errors.errors { logger.plain(.error, error.description) }
            return nil
        }
    }
}

/// Where the config is: --config, else $UPLOADER_CONFIG, else /etc/uploader/uploader.conf.
/// The working directory is never searched: a stray `./uploader.conf` must not win.
package enum ConfigLocation {
    package static let systemPath = "/etc/uploader/uploader.conf"

    package static func resolve(_ explicit: String?, environment: [String: String]) -> String {
        if let explicit { return explicit }
        if let fromEnv = environment["UPLOADER_CONFIG"], !fromEnv.isEmpty { return fromEnv }
        return systemPath
    }

    /// `path` as an absolute path (against the working directory), for saying which file was read.
    package static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        var relative = Substring(path)
        while relative.hasPrefix("./") { relative = relative.dropFirst(2).drop { $0 == "/" } }
        let cwd = FileManager.default.currentDirectoryPath
        return (cwd.hasSuffix("/") ? cwd : cwd + "/") + relative
    }
}

/// `uploader check-config`. Its errors and warnings go through `errors` (a logger that only
/// adds the journal's priority), so the `check-config` of a unit's `ExecReload=` files them
/// in the journal as errors and warnings.
enum CheckConfigCommand {
    static func run(configPath: String, environment: [String: String], errors logger: Logger) -> Int32 {
        switch ConfigLoader.load(path: configPath, environment: environment) {
        case .failure(let errors):
            // Under systemd (ExecReload=) its lines join the daemon's in the journal: same format.
            if logger.destination == .journal { logger.configure(level: .info, format: errors.logFormat, secrets: []) }
            for error in errors.errors { logger.plain(.error, error.description) }
            return Daemon.ExitCode.config
        case .success(let loaded):
            if logger.destination == .journal {
                logger.configure(level: .info, format: loaded.configuration.global.logFormat, secrets: [])
            }
            print("# config: " + ConfigLocation.absolute(configPath))
            // Each warning already reads `PATH:LINE: warning: …`.
            for warning in loaded.warnings { logger.plain(.warn, warning) }
            print(effectiveConfigText(loaded.configuration), terminator: "")
            return 0
        }
    }
}
