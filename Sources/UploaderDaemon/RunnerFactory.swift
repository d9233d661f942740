import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore

/// What it takes to start a profile's runner after start-up (SIGHUP reload), and to stop a
/// set of runners at once, each with its own grace.
package struct RunnerFactory: Sendable {
    let watcher: InotifyWatcher
    let netlink: NetlinkMonitor?
    let mimeTypes: MimeTypes
    let hostname: String
    let seams: ProfileRunner.Seams
    let logger: Logger

    package init(watcher: InotifyWatcher, netlink: NetlinkMonitor?, mimeTypes: MimeTypes, hostname: String, seams: ProfileRunner.Seams, logger: Logger) {
        self.seams = seams
        self.watcher = watcher
        self.netlink = netlink
        self.mimeTypes = mimeTypes
        self.hostname = hostname
        self.logger = logger
    }

    /// Takes the profile's lock, watches its outbox (in effect before the first scan), then
    /// recovers and starts its workers. Throws like `ProfileRunner.prepare`. `hooks` and
    /// `memory`: the hook queue and what the destination protocol learnt, of the runner this one replaces.
    func start(_ profile: Profile, hooks: HookRunner? = nil, memory: DestinationMemory? = nil) throws -> ProfileRunner {
        if profile.tls.insecureSkipVerify {
            logger.warn("insecure_skip_verify = yes: TLS certificates are NOT verified", ["profile": profile.name])
        }
        let runner = ProfileRunner(profile: profile, mode: .daemon, logger: logger, mimeTypes: mimeTypes, hostname: hostname, seams: seams,
                                   hooks: hooks, memory: memory)
        try runner.prepare(watcher: watcher)
        if !watcher.waitForRegistrations(timeout: 5) {
            logger.warn("outbox watch not confirmed within 5 s; starting anyway", ["profile": profile.name])
        }
        runner.begin(netlink: netlink)
        return runner
    }

    /// Stops every runner concurrently (each drains for its `shutdown_grace`), then releases
    /// their watches and locks.
    func stop(_ runners: [ProfileRunner]) {
        let group = DispatchGroup()
        for runner in runners {
            group.enter()
            SystemScheduler.system.startThread(named: "stop-\(runner.profile.name)") {
                runner.stop(grace: runner.profile.shutdownGrace)
                group.leave()
            }
        }
        group.wait()
        for runner in runners { runner.release(from: watcher) }
    }
}
