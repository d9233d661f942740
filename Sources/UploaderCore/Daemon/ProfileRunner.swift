import Foundation
import Synchronization

/// Runs one profile: recovers its spool, feeds watcher events into its queue, and drives
/// the worker threads that claim, upload and file away each file (at most `concurrency`
/// of them sending at once).
package final class ProfileRunner: @unchecked Sendable {
    /// `run` keeps going; `run --once` drains and stops at the first sign of an unreachable destination.
    package enum Mode: Sendable { case daemon, once }

    package let profile: Profile
    package let spool: Spool
    package let queue = WorkQueue()
    package let stats = RunStats()
    package let reachability: ReachabilityMonitor
    let logger: Logger
    let mode: Mode
    let lifecycle: FileLifecycle
    let claimer: Claimer
    let recovery: Recovery
    let ignore: IgnoreRules
    let builder: RequestBuilder
    let rateLimiter: RateLimiter?
    let hostname: String
    /// Set when the destination is `s3://`: uploads go through it instead of `builder` + transport.
    let s3: S3Uploader?
    private(set) var retries: RetryScheduler!
    private var lock: SpoolLock?
    private var workers: [Thread] = []
    private let workersDone = DispatchGroup()
    /// At most `concurrency` requests in flight, while more workers claim and file away:
    /// those steps wait on fsyncs, and concurrent fsyncs share journal commits.
    let transferSlots: DispatchSemaphore
    static let minimumWorkers = 16
    private let inFlight = Mutex<[ObjectIdentifier: CancellationFlag]>([:])
    private let stopping = Atomic<Bool>(false)
    /// Paths already warned about (refused names), so each is reported once per start.
    private let warned = Mutex<Set<RelativePath>>([])
    private var watchID: Int?
    private var timers: [DispatchSourceTimer] = []
    /// Names refused for good, counted for `status` (see ProfileRunner+Service.swift).
    package let refusedNames = RefusedNames()
    /// Runs on_sent / on_failed off the workers' threads.
    package let hooks = HookRunner()

    package init(profile: Profile, mode: Mode, logger: Logger, mimeTypes: MimeTypes, hostname: String) {
        self.profile = profile
        self.mode = mode
        self.logger = logger
        self.hostname = hostname
        spool = Spool(paths: profile.spool)
        lifecycle = FileLifecycle(spool: spool, logger: logger)
        ignore = IgnoreRules(patterns: profile.ignore)
        claimer = Claimer(spool: spool, profileName: profile.name, digest: profile.digest, mimeTypes: mimeTypes, lifecycle: lifecycle, logger: logger)
        recovery = Recovery(spool: spool, lifecycle: lifecycle, ignore: ignore, recursive: profile.recursive, logger: logger)
        builder = RequestBuilder(profile: profile)
        if case .s3(let target) = profile.destination { s3 = S3Uploader(profile: profile, target: target, logger: logger) } else { s3 = nil }
        rateLimiter = profile.maxRate > 0 ? RateLimiter(bytesPerSecond: profile.maxRate) : nil
        let probe: TCPProbe?
        switch profile.destination {
        case .http(let template): probe = TCPProbe(urlTemplate: template.description, timeout: profile.connectTimeout)
        case .s3(let target): probe = TCPProbe(s3: target, timeout: profile.connectTimeout)
        }
        reachability = ReachabilityMonitor(probe: probe, profile: profile.name, logger: logger)
        transferSlots = DispatchSemaphore(value: profile.concurrency)
        retries = RetryScheduler { [weak self] path in self?.releaseFromRetry(path) }
    }

    /// Takes the lock (throws `SpoolLock.Failure`), creates the spool and registers its outbox
    /// with the watcher. Call `begin` once the watcher runs.
    package func prepare(watcher: InotifyWatcher) throws {
        try spool.prepare()
        lock = try SpoolLock(path: spool.paths.lockFile)
        watchID = watcher.add(root: spool.paths.outbox, recursive: profile.recursive) { [weak self] event in
            self?.handle(event)
        }
    }

    /// Recovers the spool, queues what is there, and starts the workers (the outbox is already watched).
    package func begin(netlink: NetlinkMonitor?) {
        let started = Date()
        let retryScan = recovery.scanRetry()
        queue.add(contentsOf: retryScan.requeued)
        for entry in retryScan.due { retries.schedule(entry.path, at: entry.at) }
        let scan = recovery.scanOutbox()
        warnIgnoredDirectories(scan.directoriesIgnored)
        queue.add(contentsOf: scan.files)
        let retention = Retention(spool: spool, keep: profile.keepSent, logger: logger)
        retention.sweep()
        if mode == .once {
            for path in retries.takeDue(before: started) { releaseFromRetry(path) }
        } else {
            if profile.keepSent > 0 { startPeriodic(every: min(3600, max(1, profile.keepSent / 10))) { retention.sweep() } }
            if profile.rescan > 0 { startPeriodic(every: profile.rescan) { [weak self] in self?.handle(.rescanNeeded("periodic rescan")) } }
            retries.start()
            netlink?.addListener { [weak self] in self?.reachability.networkChanged() }
            reachability.start { [weak self] online in self?.reachabilityChanged(online) }
        }
        logger.info("watching outbox", ["profile": profile.name, "dir": spool.paths.outbox, "queued": String(queue.counts.waiting),
                                          "retry_scheduled": String(retryScan.due.count)])
        for index in 0..<max(profile.concurrency, Self.minimumWorkers) {
            workersDone.enter()
            let thread = Thread { [self] in
                self.workerLoop()
                self.workersDone.leave()
            }
            thread.name = "\(profile.name)-\(index)"
            workers.append(thread)
            thread.start()
        }
    }

    /// Runs `action` every `interval` seconds on a timer until the runner stops.
    private func startPeriodic(every interval: TimeInterval, _ action: @escaping @Sendable () -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in
            guard let self, !self.isStopping else { return }
            action()
        }
        timers.append(timer)
        timer.resume()
    }

    private func handle(_ event: WatchEvent) {
        switch event {
        case .fileReady(let path):
            if !ignore.ignores(path) { queue.add(path) }
        case .directoryAppeared(let path):
            if profile.recursive {
                queue.add(contentsOf: recovery.scanOutbox(path).files)
            } else {
                warnIgnoredDirectories([path])
            }
        case .rescanNeeded:
            let scan = recovery.scanOutbox()
            queue.add(contentsOf: scan.files)
        }
    }

    private func warnIgnoredDirectories(_ paths: [RelativePath]) {
        for path in paths where !ignore.ignores(path) {
            warnOnce(path, "directory in a non-recursive outbox ignored (set recursive = yes to upload its files)")
        }
    }

    func warnOnce(_ path: RelativePath, _ message: String) {
        guard warned.withLock({ $0.insert(path).inserted }) else { return }
        logger.warn(message, ["profile": profile.name, "file": path.logSafe])
    }

    private func reachabilityChanged(_ online: Bool) {
        retries.setHeld(!online)
        queue.setPaused(!online)
        if !online { cancelInFlight() }
    }

    /// Moves a due file back from retry/ and queues it.
    private func releaseFromRetry(_ path: RelativePath) {
        do {
            let back = try lifecycle.moveBack(fromRetry: path, resetBackoff: false)
            queue.add(back)
        } catch {
            logger.debug("retry entry no longer in retry/", ["profile": profile.name, "file": path.logSafe, "error": "\(error)"])
        }
    }

    // MARK: Workers

    private func workerLoop() {
        let transport = CurlTransport()
        while let path = queue.take() {
            process(path, transport: transport)
            queue.done(path)
        }
    }

    package var isStopping: Bool { stopping.load(ordering: .relaxed) }

    func track(_ flag: CancellationFlag) {
        inFlight.withLock { $0[ObjectIdentifier(flag)] = flag }
        if isStopping { flag.cancel() }
    }

    func untrack(_ flag: CancellationFlag) {
        _ = inFlight.withLock { $0.removeValue(forKey: ObjectIdentifier(flag)) }
    }

    func cancelInFlight() {
        for flag in inFlight.withLock({ Array($0.values) }) { flag.cancel() }
    }

    /// `run --once`: the destination is unreachable, so stop taking work and leave the rest queued.
    func stopForOffline() {
        stats.recordLeftQueuedOffline()
        queue.close()
    }

    // MARK: Stopping

    /// Stops taking work, lets uploads in flight finish for `grace`, then aborts the rest (they stay queued).
    package func stop(grace: TimeInterval) {
        stopping.store(true, ordering: .relaxed)
        for timer in timers { timer.cancel() }
        queue.close()
        retries.stop()
        reachability.stop()
        if workersDone.wait(timeout: .now() + max(0, grace)) == .timedOut {
            logger.warn("shutdown grace over; aborting uploads in flight (they stay queued)", ["profile": profile.name])
            cancelInFlight()
            workersDone.wait()
        }
    }

    /// After `stop`: forgets the outbox watch and releases the spool lock, so a reloaded
    /// profile can take both again in this same process.
    package func release(from watcher: InotifyWatcher) {
        if let watchID { watcher.remove(watchID) }
        watchID = nil
        lock = nil
    }

    /// Blocks until nothing is waiting or in flight (or the queue was closed); for `run --once`.
    package func waitUntilDrained() {
        while !queue.waitUntilIdle(deadline: Date().addingTimeInterval(0.2)) {
            if stats.snapshot.leftQueuedOffline { return }
        }
    }
}
