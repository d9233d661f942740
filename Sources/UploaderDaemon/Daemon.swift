import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore

/// `uploader run`: starts one `ProfileRunner` per selected profile around one watcher,
/// then waits for signals (daemon) or for the queues to drain (`--once`).
package final class Daemon {
    /// The process's exit statuses (sysexits.h where one fits); `--help` and uploader(1) list them.
    package enum ExitCode {
        package static let ok: Int32 = 0
        package static let someFailed: Int32 = 1
        /// `EX_USAGE`: the command line is wrong (unknown command or option, a missing argument,
        /// a profile name the config does not have).
        package static let usage: Int32 = 64
        package static let unavailable: Int32 = 69
        package static let software: Int32 = 70
        /// `EX_CANTCREAT`: a spool or its lock cannot be written (read-only, no permission).
        package static let cannotCreate: Int32 = 73
        package static let tempFail: Int32 = 75
        /// EX_NOPERM: a user who does not own the spool ran a command that must write in it.
        package static let noPermission: Int32 = 77
        /// `EX_CONFIG`: the configuration file is missing, unreadable or invalid.
        package static let config: Int32 = 78
    }

    private let loaded: LoadedConfiguration
    private let profileNames: [String]
    private let once: Bool
    private let logger: Logger
    private let environment: [String: String]
    private let clock: any Clock
    private var runners: [ProfileRunner] = []
    /// Signals and drained profiles, for the main thread: it sleeps until one arrives.
    private let events = Mailbox<DaemonEvent>()

    package init(loaded: LoadedConfiguration, profileNames: [String], once: Bool, logger: Logger, environment: [String: String],
                 clock: any Clock) {
        self.clock = clock
        self.loaded = loaded
        self.environment = environment
        self.profileNames = profileNames
        self.once = once
        self.logger = logger
    }

    package func run() -> Int32 {
        let config = loaded.configuration
        logger.configure(level: config.global.logLevel, format: config.global.logFormat, secrets: config.secretValues)
        for warning in loaded.warnings { logger.warn(warning) }
        let selected = profileNames.isEmpty ? config.profiles : config.profiles.filter { profileNames.contains($0.name) }
        if let unknown = profileNames.first(where: { name in !config.profiles.contains { $0.name == name } }) {
            fail("no profile named \"\(unknown)\" in \(config.path)")
            return ExitCode.usage
        }
        guard !selected.isEmpty else {
            fail("no [outbox NAME] profile in \(config.path)")
            return ExitCode.config
        }
        Signals.blockHandled()
        MallocArenas.limit(to: 2, environment: environment)
        // Signals, network changes, the owners' deadlines and the reporter's rounds: one thread.
        let service = ServiceLoop(clock: clock)
        do {
            try service.takeSignals(Signals.handled) { [events] signal in events.send(.signal(signal)) }
        } catch {
            fail("cannot take signals (signalfd): \(error.description)")
            return ExitCode.software
        }
        var seams = ProfileRunner.Seams()
        seams.clock = clock
        seams.environment = environment
        seams.tickers = service
        if seams.bootID == nil {
            logger.warn("cannot read the boot id (\(BootID.path)): a file's hash is not checked again after a reboot, "
                        + "so content a power cut undid may go out under the digest recorded before it")
        }
        let watcher = InotifyWatcher(logger: logger, clock: clock)
        let netlink = once ? nil : NetlinkMonitor(logger: logger)
        if let netlink, let fd = netlink.open() { service.watch(fd) { netlink.readAvailable(fd) } }
        let mimeTypes = MimeTypes.load()
        let hostname = Self.hostname()
        for profile in selected {
            if profile.tls.insecureSkipVerify {
                logger.warn("insecure_skip_verify = yes: TLS certificates are NOT verified", ["profile": profile.name])
            }
            let name = profile.name
            let runner = ProfileRunner(profile: profile, mode: once ? .once : .daemon, logger: logger, mimeTypes: mimeTypes,
                                       hostname: hostname, seams: seams) { [events] effect in
                if effect == .drained { events.send(.drained(name)) }
            }
            do {
                try runner.prepare(watcher: watcher)
                runners.append(runner)
            } catch let failure as SpoolLock.Failure {
                // This runner's workers too: the process must not exit while they start (one still
                // in curl's global init crashed the exit, status 139 instead of 75).
                for started in runners + [runner] { started.stop(grace: 0) }
                switch failure {
                case .heldBy:
                    fail("profile \(profile.name): \(failure); not starting")
                    return ExitCode.tempFail
                case .refused:
                    fail("profile \(profile.name): cannot take lock: \(failure)")
                    return ExitCode.cannotCreate
                case .system:
                    fail("profile \(profile.name): cannot take lock: \(failure)")
                    return ExitCode.software
                }
            } catch {
                for started in runners + [runner] { started.stop(grace: 0) }
                fail("profile \(profile.name): cannot prepare spool: \(error)")
                return error is WriteRefused || error is ProducersLayout.Failure ? ExitCode.cannotCreate : ExitCode.software
            }
        }
        ProfileIndex.publish(config, logger: logger)
        service.start()
        do { try watcher.start() } catch {
            fail("\(error)")
            return ExitCode.software
        }
        for runner in runners { runner.begin(netlink: netlink) }
        // State files, metrics, systemd notifications and SIGHUP reloads: see ServiceReporter and ConfigReloader.
        let reporter = ServiceReporter(notifier: SystemdNotifier(environment: once ? [:] : environment), logger: logger, clock: clock,
                                       tickers: service)
        reporter.start(runners: runners, global: config.global)
        let factory = RunnerFactory(watcher: watcher, netlink: netlink, mimeTypes: mimeTypes, hostname: hostname, seams: seams, logger: logger)
        let reloader = ConfigReloader(path: config.path, profileNames: profileNames, environment: environment,
                                      factory: factory, reporter: reporter, logger: logger)
        let credentials = CredentialsWatch(watcher: watcher, logger: logger) { [events] path in events.send(.credentialsChanged(path)) }
        if !once { credentials.watch(runners.map(\.profile)) }
        let code = once ? runOnce() : runDaemon(reloader, credentials: credentials)
        credentials.stop()
        HookRunner.drain(runners, once: once, logger: logger)
        reporter.finish()
        service.stop()
        watcher.stop()
        return code
    }

    private func runDaemon(_ reloader: ConfigReloader, credentials: CredentialsWatch) -> Int32 {
        logger.info("uploader \(UploaderVersion.string) running", ["profiles": runners.map(\.profile.name).joined(separator: ",")])
        while true {
            let signal: Signal
            switch events.take(timeout: nil) {
            case .signal(let taken)?:
                signal = taken
            case .credentialsChanged(let path)?:
                runners = reloader.reload(runners, cause: "credentials file \(path) changed")
                credentials.watch(runners.map(\.profile))
                continue
            case .drained?, nil:
                continue
            }
            if signal == .hangUp {
                runners = reloader.reload(runners)
                credentials.watch(runners.map(\.profile))
                continue
            }
            logger.info("stopping", ["signal": signal == .terminate ? "SIGTERM" : "SIGINT"])
            reloader.reporter.stopping()
            stopAll()
            return ExitCode.ok
        }
    }

    private func runOnce() -> Int32 {
        var drained = Set<String>()
        waiting: while drained.count < runners.count {
            switch events.take(timeout: nil) {
            case .drained(let name)?:
                drained.insert(name)
            case .signal(let signal)? where signal != .hangUp:
                logger.info("stopping", ["signal": signal == .terminate ? "SIGTERM" : "SIGINT"])
                break waiting
            case .signal?, .credentialsChanged?, nil:
                continue
            }
        }
        stopAll()
        var sent = 0, retried = 0, failed = 0, offline = false
        for runner in runners {
            let s = runner.snapshot.totals
            sent += s.sent
            retried += s.retried
            failed += s.failed
            offline = offline || s.leftQueuedOffline
        }
        logger.info("run --once finished", ["sent": String(sent), "retry": String(retried), "failed": String(failed),
                                            "left_queued_offline": offline ? "yes" : "no"])
        if retried + failed > 0 { return ExitCode.someFailed }
        if offline { return ExitCode.unavailable }
        return ExitCode.ok
    }

    private func stopAll() {
        let group = DispatchGroup()
        for runner in runners {
            group.enter()
            let grace = runner.profile.shutdownGrace
            SystemScheduler.system.startThread(named: "stop-\(runner.profile.name)") {
                runner.stop(grace: grace)
                group.leave()
            }
        }
        group.wait()
    }

    static func hostname() -> String { ProcessIdentity.hostName }

    /// An error that stops the daemon: one line, prefixed with the program name (and for the
    /// journal, with its priority).
    private func fail(_ message: String) {
        logger.plain(.error, "uploader: " + message)
    }

    /// One error line on stderr, prefixed with the program name.
    package static func printError(_ message: String) {
        Logger.standardError("uploader: " + message)
    }
}

/// What wakes the daemon's main thread.
enum DaemonEvent: Sendable {
    case signal(Signal)
    /// `run --once`: this profile has nothing left to do.
    case drained(String)
    /// A credentials file changed (its path): reload as on SIGHUP.
    case credentialsChanged(String)
}
