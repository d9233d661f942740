import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// One profile, wired: its spool lock, its outbox watch, the start-up recovery, and the owner
/// (`ProfileLoop`) with the executor that carries out the owner's effects. The runner itself
/// decides nothing; it connects the event sources (watcher, netlink, signals via the daemon) to
/// the owner's mailbox. Timers are the owner's: its deadlines (retries, probes, passes over sent/,
/// rescans) wake it with `.tick`.
package final class ProfileRunner: Sendable {
    package let profile: Profile
    package let spool: Spool
    package let ignore: IgnoreRules
    /// Runs on_sent / on_failed off the workers' threads.
    package let hooks: HookRunner
    /// What the destination protocol has learnt (e.g. WebDAV collections that exist), kept across reloads.
    package let destinationMemory: DestinationMemory
    let loop: ProfileLoop
    private let executor: ProfileExecutor
    private var recovery: Recovery { executor.recovery }
    private let logger: Logger
    private let clock: any Clock
    /// What this runner holds while it runs: the spool lock, the watch and the netlink
    /// listener; released by `stop`/`release`.
    private let holdings = Mutex(Holdings())

    private struct Holdings: Sendable {
        var lock: SpoolLock?
        var watchID: Int?
        var netlink: (monitor: NetlinkMonitor, id: Int)?
        /// The owner was started (`begin`); a runner stopped before that has nothing to wait for.
        var begun = false
    }

    /// The seams a runner is built on; production values by default.
    package struct Seams: Sendable {
        package var clock: any Clock = SystemClock()
        package var makeTransport: @Sendable () -> any Transport = { CurlTransport() }
        /// Nil: a TCP connect to the destination's host and port, or a request through its proxy.
        package var probe: (any ReachabilityProbe)?
        package var environment: [String: String] = ProcessInfo.processInfo.environment
        /// The file system the spool's code works on.
        package var fs: any SpoolFileSystem = LocalFileSystem()
        /// The zone `upload_window` and the `max_rate` timetable read local time in.
        package var timeZone: TimeZone = .current
        /// Nil: the kernel's route to the destination's host, or its proxy's (only asked with `interfaces`).
        package var route: (any RouteLookup)?
        /// The running boot's id, which a record's hash is checked against (`Claimer.bootID`).
        package var bootID: String? = BootID.current
        /// Where the owner's deadlines come from (nil: a timer thread of the runner's own).
        package var tickers: (any DeadlineTickers)?

        package init() {}
    }

    /// `onFinished` hears `.drained` (`run --once` has nothing left) and `.stopped`. `hooks`: the
    /// hook queue of the runner this one replaces (a reload), so no hook runs twice at once;
    /// `memory`: what its destination protocol learnt (e.g. no WebDAV collection is made again).
    package init(profile: Profile, mode: ProfilePolicy.Mode, logger: Logger, mimeTypes: MimeTypes, hostname: String,
                 seams: Seams = Seams(), hooks: HookRunner? = nil, memory: DestinationMemory? = nil,
                 onFinished: @escaping @Sendable (ProfileEffect) -> Void = { _ in }) {
        self.profile = profile
        self.logger = logger
        self.clock = seams.clock
        self.hooks = hooks ?? HookRunner(clock: seams.clock)
        destinationMemory = memory ?? DestinationMemory()
        spool = Spool(paths: profile.spool, fs: seams.fs)
        ignore = IgnoreRules(patterns: profile.ignore)
        let lifecycle = FileLifecycle(spool: spool, logger: logger, afterSend: profile.afterSend)
        let policy = ProfilePolicy(profile: profile, mode: mode, timeZone: seams.timeZone)
        loop = ProfileLoop(policy: policy, clock: seams.clock, ticker: seams.tickers?.makeTicker())
        let reach = ReachabilityPlan(profile: profile, environment: seams.environment)
        let probe: (any ReachabilityProbe)? = seams.probe ?? reach.probe
        let route: (any RouteLookup)? = seams.route ?? reach.routeHost.map { KernelRoute(host: $0) }
        let parts = ProfileExecutor.Parts(
            claimer: Claimer(spool: spool, profileName: profile.name, digest: profile.digest, mimeTypes: mimeTypes,
                             lifecycle: lifecycle, logger: logger, bootID: seams.bootID,
                             foundBeside: { [loop, spool] name in loop.send(.found(spool.queuedFiles([name]))) }),
            lifecycle: lifecycle,
            rateLimiter: profile.maxRate.limitsSometimes
                ? RateLimiter(schedule: profile.maxRate, timeZone: seams.timeZone, clock: seams.clock) : nil,
            probe: probe,
            jobs: WorkerPool(size: Self.workerCount(for: policy), backgroundLimit: Self.backgroundLimit(for: policy), label: profile.name,
                             makeTransport: seams.makeTransport),
            hostname: hostname, environment: seams.environment, route: route, memory: destinationMemory,
            threads: DestinationThreads(makeTransport: seams.makeTransport))
        executor = ProfileExecutor(profile: profile, spool: spool, parts: parts, hooks: self.hooks, logger: logger, clock: seams.clock,
                                   report: { [loop] event in loop.send(event) }, finished: onFinished)
    }

    /// The job threads a runner starts for `policy`: one per upload slot and a few more, on which
    /// claims ahead, filings and the chores run (`backgroundLimit`). Bounded by the work, not by
    /// the jobs the core can have out: moves that wait together are filed as one batch by one
    /// worker (`FilingLine`), so no thread sits in a move waiting for the others'. The simulator
    /// runs this same pool, its scheduler deciding which thread runs when.
    package static func workerCount(for policy: ProfilePolicy) -> Int {
        policy.concurrency + 4
    }

    /// How many of the workers background jobs (claims ahead, moves back, passes over sent/,
    /// rescans, probes) may take at once: all but one per slot, so an upload never waits behind
    /// them (and the filer or a settle, urgent, takes the next worker free).
    package static func backgroundLimit(for policy: ProfilePolicy) -> Int {
        workerCount(for: policy) - policy.concurrency
    }

    /// Takes the lock (throws `SpoolLock.Failure`), creates the spool and registers its outbox
    /// with the watcher. Call `begin` once the watcher runs.
    package func prepare(watcher: InotifyWatcher) throws {
        // On the system's clock, not the runner's: what the lock may wait for is a child process's exec.
        let lock = try SpoolStartUp.take(spool)
        try ProducersLayout.apply(profile, logger: logger)
        let id = watcher.add(root: spool.paths.outbox, recursive: profile.recursive) { [weak self] event in
            self?.watched(event)
        }
        holdings.withLock {
            $0.lock = lock
            $0.watchID = id
        }
    }

    /// Recovers the spool, hands what is there to the owner, and starts it (the outbox is already watched).
    package func begin(netlink: NetlinkMonitor?) {
        let started = clock.now
        let retryScan = recovery.scanRetry()
        let scan = recovery.scanOutbox()
        // After recovery (which finishes cut moves and writes their markers), before any claim.
        executor.queueDueHooks()
        do { try spool.sentLedger.compact(now: clock.now) } catch {
            logger.warn("cannot compact the sent ledger; status may count fewer", ["profile": profile.name, "error": "\(error)"])
        }
        let mode = loop.policy.mode
        // The daemon's passes are the core's chores (`sweepSent`), the first as soon as it starts (a
        // sent/ of a million files takes a second or two to walk); `run --once` prunes before it starts.
        if mode == .once { executor.retention.sweep(now: clock.now) }
        let state = ProfileState(seed: UInt64.random(in: .min ... .max), onceCutoff: mode == .once ? started : nil)
        // Counted now: the scan's list of a backlog is not kept past the event made of it.
        let queued = retryScan.requeued.count + scan.files.count
        loop.send(.recovered(files: spool.queuedFiles(retryScan.requeued.isEmpty ? scan.files : retryScan.requeued + scan.files),
                             retries: (retryScan.due + scan.retries).map { RetryEntry(path: $0.path, due: $0.at) },
                             ignoredDirectories: scan.directoriesIgnored.filter { !ignore.ignores($0) }))
        holdings.withLock { $0.begun = true }
        loop.start(state, name: profile.name) { [executor] effect in executor.perform(effect) }
        if mode == .daemon {
            let listener = netlink.map { monitor in (monitor, monitor.addListener { [loop] in loop.send(.networkChanged) }) }
            holdings.withLock { $0.netlink = listener }
        }
        logger.info("watching outbox", ["profile": profile.name, "dir": spool.paths.outbox,
                                          "queued": String(queued),
                                          "retry_scheduled": String(retryScan.due.count)])
    }

    /// Turns what the watcher saw into events; scans (I/O) happen here, on the watcher's thread.
    private func watched(_ event: WatchEvent) {
        switch event {
        case .fileReady(let path):
            if !ignore.ignores(path) { loop.send(.found(spool.queuedFiles([path]))) }
        case .filesReady(let paths):
            let taken = paths.filter { !ignore.ignores($0) }
            if !taken.isEmpty { loop.send(.found(spool.queuedFiles(taken))) }
        case .directoryAppeared(let path):
            if profile.recursive {
                // Its files come as `fileReady` once closed (the watcher holds them till then); the
                // scan finishes the moves a crash cut in a directory moved in.
                executor.queueHooks(finishedBy: recovery.scanOutbox(path, atStartUp: false))
            } else if !ignore.ignores(path) {
                loop.send(.directoriesIgnored([path]))
            }
        case .rescanNeeded:
            executor.rescan()
        }
    }

    /// Stops taking work, lets uploads in flight finish for `grace`, aborts the rest (they stay
    /// queued), and returns once the owner has stopped and every job has ended.
    package func stop(grace: TimeInterval) {
        let (netlink, begun) = holdings.withLock { h in
            defer { h.netlink = nil; h.begun = false }
            return (h.netlink, h.begun)
        }
        if let netlink { netlink.monitor.removeListener(netlink.id) }
        guard begun else { return executor.jobs.shutDown() }
        loop.send(.stop(grace: grace))
        loop.waitUntilEnded()
        executor.jobs.shutDown()
    }

    /// After `stop`: forgets the outbox watch and releases the spool lock, so a reloaded
    /// profile can take both again in this same process.
    package func release(from watcher: InotifyWatcher) {
        let id = holdings.withLock { h in
            defer { h.watchID = nil; h.lock = nil }
            return h.watchID
        }
        if let id { watcher.remove(id) }
    }

    /// What the owner last published.
    package var snapshot: ProfileSnapshot { loop.snapshot }

    /// SIGHUP, or a credentials file changed (the secrets this runner holds are the same: a changed
    /// secret starts a new runner): a profile paused for refused credentials tries a file now.
    package func credentialsMayHaveChanged() {
        loop.send(.credentialsChanged)
    }

    /// This runner's state for `status`: reachability as last seen, the reason when offline or
    /// when our credentials are refused, refused names, why it pauses, and the uploads in flight.
    package var daemonState: DaemonState {
        let s = snapshot
        let lastError = s.pausedReason == .rejected ? s.refusal : s.online ? nil : s.lastProblem
        return DaemonState(pid: ProcessIdentity.processID, reachable: s.online, lastError: lastError,
                           refused: s.refused, updatedAt: Timestamp.format(clock.now), pausedReason: s.pausedReason,
                           inFlight: executor.inFlight.files(at: clock.monotonic))
    }
}
