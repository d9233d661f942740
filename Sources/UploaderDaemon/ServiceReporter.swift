import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore

/// Keeps what operators watch up to date while `run` goes on: each spool's `.state.json` (at
/// start, on every reachability change, every 10 s), the metrics file (every 10 s and at exit),
/// and systemd's READY/STATUS/STOPPING/WATCHDOG. The state file is also rewritten within half
/// a second when a name is refused or the offline reason changes. One ticking thread; spool counts come from
/// `SpoolCounter`'s own thread so a big spool never delays the watchdog.
package final class ServiceReporter: Sendable {
    private struct State {
        var runners: [ProfileRunner] = []
        var metricsFile: String?
        /// Counters of runners replaced by a reload, per profile, so `_total`s never go back.
        var retired: [String: RunTotals] = [:]
        /// What each runner's state file last said (reachable, refused count, error), to write on change.
        var lastWritten: [ObjectIdentifier: String] = [:]
        var stopped = false
    }

    static let period: TimeInterval = 10
    private let state = Mutex(State())
    private let wake = NSCondition()
    private let notifier: SystemdNotifier
    private let counter: SpoolCounter
    private let metrics: MetricsWriter
    private let logger: Logger
    private let done = DispatchSemaphore(value: 0)

    private let clock: any Clock

    package init(notifier: SystemdNotifier, logger: Logger, clock: any Clock = SystemClock()) {
        self.notifier = notifier
        self.logger = logger
        self.clock = clock
        counter = SpoolCounter(logger: logger, clock: clock)
        metrics = MetricsWriter(logger: logger)
    }

    /// Every profile is watching: writes the state files, tells systemd READY=1, starts ticking.
    package func start(runners: [ProfileRunner], global: GlobalSettings) {
        state.withLock {
            $0.runners = runners
            $0.metricsFile = global.metricsFile.flatMap { $0.isEmpty ? nil : $0 }
        }
        writeStateFiles(onlyChanged: false)
        notifier.send("READY=1\n" + SystemdNotifier.statusLine(statusText()))
        counter.start(runners: { [self] in state.withLock { $0.runners } }, onUpdate: { [self] in writeMetrics() })
        let thread = Thread { [self] in
            tick()
            done.signal()
        }
        thread.name = "service-reporter"
        thread.start()
    }

    /// After a reload: the runners now running, and those stopped (their counters carry over
    /// to a successor of the same name).
    package func update(runners: [ProfileRunner], retired: [ProfileRunner], global: GlobalSettings) {
        state.withLock { s in
            let names = Set(runners.map(\.profile.name))
            for old in retired where names.contains(old.profile.name) {
                s.retired[old.profile.name] = (s.retired[old.profile.name] ?? RunTotals()) + old.snapshot.totals
            }
            s.retired = s.retired.filter { names.contains($0.key) }
            s.runners = runners
            s.metricsFile = global.metricsFile.flatMap { $0.isEmpty ? nil : $0 }
        }
        writeStateFiles(onlyChanged: false)
        notifier.send(SystemdNotifier.statusLine(statusText()))
    }

    /// SIGTERM: tells systemd STOPPING=1 (uploads in flight still have their grace).
    package func stopping() {
        notifier.send("STOPPING=1\n" + SystemdNotifier.statusLine("stopping: letting uploads in flight finish"))
    }

    /// The runners have stopped: stops ticking and writes the metrics file one last time.
    package func finish() {
        state.withLock { $0.stopped = true }
        wake.lock(); wake.broadcast(); wake.unlock()
        counter.stop()
        done.wait()
        if counter.lastDuration < 2 { counter.countNow(state.withLock { $0.runners }) }
        writeMetrics()
    }

    /// State changes within half a second; everything else every 10 s; WATCHDOG=1 at its pace.
    private func tick() {
        let step = min(0.5, notifier.watchdogInterval ?? 0.5)
        var nextPeriodic = clock.monotonic + Self.period
        var nextWatchdog = clock.monotonic
        while !state.withLock({ $0.stopped }) {
            let now = clock.monotonic
            if let interval = notifier.watchdogInterval, now >= nextWatchdog {
                notifier.send("WATCHDOG=1")
                nextWatchdog = now + interval
            }
            if now >= nextPeriodic {
                nextPeriodic = now + Self.period
                writeStateFiles(onlyChanged: false)
                writeMetrics()
                notifier.send(SystemdNotifier.statusLine(statusText()))
            } else {
                writeStateFiles(onlyChanged: true)
            }
            wake.lock()
            if !state.withLock({ $0.stopped }) { _ = wake.wait(until: Date().addingTimeInterval(step)) }
            wake.unlock()
        }
    }

    private func writeStateFiles(onlyChanged: Bool) {
        let runners = state.withLock { $0.runners }
        for runner in runners {
            let current = runner.daemonState
            let summary = "\(current.reachable) \(current.refused) \(current.pausedReason ?? "-") \(current.lastError ?? "")"
            let changed = state.withLock { s -> Bool in
                let id = ObjectIdentifier(runner)
                defer { s.lastWritten[id] = summary }
                return s.lastWritten[id] != summary
            }
            if changed || !onlyChanged { current.write(to: runner.spool.paths) }
        }
    }

    private func writeMetrics() {
        let (runners, path, retired) = state.withLock { ($0.runners, $0.metricsFile, $0.retired) }
        guard let path else { return }
        let profiles = runners.map { runner in
            ProfileMetrics(profile: runner.profile.name,
                           totals: (retired[runner.profile.name] ?? RunTotals()) + runner.snapshot.totals,
                           census: counter.latest(runner.profile.name), destinationUp: runner.snapshot.online)
        }
        metrics.write(MetricsText.render(profiles, now: clock.now), to: path)
    }

    /// `photos: 3 queued, 1 uploading, 2 in retry, 0 failed; docs: OFFLINE, 12 queued, …`
    private func statusText() -> String {
        let runners = state.withLock { $0.runners }
        return runners.map { runner in
            let counts = runner.snapshot
            let census = counter.latest(runner.profile.name)
            var text = "\(runner.profile.name): "
            if !counts.online { text += "OFFLINE, " }
            text += "\(counts.waiting) queued, \(counts.inFlight) uploading"
            if let census { text += ", \(census.retry.files) in retry, \(census.failed.files) failed" }
            return text
        }.joined(separator: "; ")
    }
}
