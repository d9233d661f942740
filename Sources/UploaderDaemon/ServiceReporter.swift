import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore

/// Keeps what operators watch up to date while `run` goes on: each spool's `.state.json` (at
/// start, every 10 s, within a quarter second of a change — reachability, pause reason, refused
/// names, the last error — and every 0.75 s while uploads are in flight, for their progress,
/// and once more after the last one ended), the metrics file (every 10 s and at exit), and systemd's
/// READY/STATUS/STOPPING/WATCHDOG. Its rounds are ticks of the daemon's `ServiceLoop`; spool
/// counts come from `SpoolCounter`'s own thread so a big spool never delays the watchdog.
///
/// Progress costs one small write and a rename per profile per second, with no fsync: the state
/// file is a hint `status` reads, never a record recovery needs.
package final class ServiceReporter: Sendable {
    private struct State {
        var runners: [ProfileRunner] = []
        var metricsFile: String?
        /// Counters of runners replaced by a reload, per profile, so `_total`s never go back.
        var retired: [String: RunTotals] = [:]
        /// What each runner's state file last said (see `summary`), to write on change.
        var lastWritten: [ObjectIdentifier: String] = [:]
        /// When each runner's state file was last written (monotonic), to refresh progress.
        var writtenAt: [ObjectIdentifier: Double] = [:]
        /// Whether it listed uploads in flight, so the one that lists none is written too.
        var listedInFlight: [ObjectIdentifier: Bool] = [:]
    }

    static let period: TimeInterval = 10
    /// While uploads are in flight the state file is rewritten at least this often (and at most
    /// every `step`), so `status` shows progress at least once a second.
    static let progressInterval: TimeInterval = 0.75
    static let step: TimeInterval = 0.25
    /// When the next rounds are due (monotonic), and whether `finish` ended them; held through a
    /// round, so `finish` waits for one under way.
    private struct Rounds {
        var nextPeriodic: Double
        var nextWatchdog: Double
        var stopped = false
    }

    private let state = Mutex(State())
    private let rounds: Mutex<Rounds>
    private let notifier: SystemdNotifier
    private let counter: SpoolCounter
    private let metrics: MetricsWriter
    private let logger: Logger
    private let ticker: any DeadlineTicker

    private let clock: any Clock

    /// `tickers`: where its rounds come due (the daemon's `ServiceLoop`).
    package init(notifier: SystemdNotifier, logger: Logger, clock: any Clock = SystemClock(), tickers: any DeadlineTickers) {
        self.notifier = notifier
        self.logger = logger
        self.clock = clock
        counter = SpoolCounter(logger: logger, clock: clock)
        metrics = MetricsWriter(logger: logger)
        ticker = tickers.makeTicker()
        rounds = Mutex(Rounds(nextPeriodic: clock.monotonic + Self.period, nextWatchdog: clock.monotonic))
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
        rounds.withLock { $0.nextPeriodic = clock.monotonic + Self.period }
        ticker.start(name: "service-reporter") { [self] in tick() }
        ticker.wake(in: 0)
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

    /// The runners have stopped (their locks still held): stops ticking, writes the metrics file
    /// one last time and removes the state files, so `status` tells a clean exit from a crash.
    package func finish() {
        rounds.withLock { $0.stopped = true }
        ticker.stop()
        counter.stop()
        let runners = state.withLock { $0.runners }
        if counter.lastDuration < 2 { counter.countNow(runners) }
        writeMetrics()
        for runner in runners {
            do {
                try DaemonState.removeAtExit(runner.spool.paths)
            } catch {
                logger.warn("cannot remove the state file; status will say the daemon died", ["profile": runner.profile.name, "error": "\(error)"])
            }
        }
    }

    /// One round: state changes within a quarter second; progress about once a second; everything
    /// else every 10 s; WATCHDOG=1 at its pace. Then the next round is due a step later.
    private func tick() {
        let step = min(Self.step, notifier.watchdogInterval ?? Self.step)
        let goOn = rounds.withLock { r -> Bool in
            guard !r.stopped else { return false }
            let now = clock.monotonic
            if let interval = notifier.watchdogInterval, now >= r.nextWatchdog {
                notifier.send("WATCHDOG=1")
                r.nextWatchdog = now + interval
            }
            if now >= r.nextPeriodic {
                r.nextPeriodic = now + Self.period
                writeStateFiles(onlyChanged: false)
                writeMetrics()
                notifier.send(SystemdNotifier.statusLine(statusText()))
            } else {
                writeStateFiles(onlyChanged: true)
            }
            return true
        }
        if goOn { ticker.wake(in: step) }
    }

    private func writeStateFiles(onlyChanged: Bool) {
        let runners = state.withLock { $0.runners }
        let now = clock.monotonic
        for runner in runners {
            var current = runner.daemonState
            current.counts = counter.latest(runner.profile.name).map(DaemonState.Counts.init)
            let summary = Self.summary(current)
            let due = state.withLock { s -> Bool in
                let id = ObjectIdentifier(runner)
                let changed = s.lastWritten[id] != summary
                let moving = !current.inFlight.isEmpty || s.listedInFlight[id] == true
                let progressing = moving && now - (s.writtenAt[id] ?? -.infinity) >= Self.progressInterval
                guard changed || progressing || !onlyChanged else { return false }
                s.lastWritten[id] = summary
                s.writtenAt[id] = now
                s.listedInFlight[id] = !current.inFlight.isEmpty
                return true
            }
            guard due else { continue }
            do {
                try current.write(to: runner.spool.paths)
            } catch {
                // Once per spool: rewritten every second, the same failure would fill the log.
                logger.warnOnce(key: "state file \(runner.spool.paths.stateFile)", "cannot write the state file; status shows an old one",
                                ["profile": runner.profile.name, "error": "\(error)"])
            }
        }
    }

    /// What, when it changes, is written at once (the spool counts included, new every 10 s or so): all but the uploads in flight, which change
    /// many times a second with small files and are written at most every `progressInterval`.
    private static func summary(_ state: DaemonState) -> String {
        let counts = state.counts.map { "\($0.retry.files) \($0.failed.files) \($0.sent24h.files)" } ?? "-"
        return "\(state.reachable) \(state.refused) \(state.pausedReason?.rawValue ?? "-") \(counts) \(state.lastError ?? "")"
    }

    private func writeMetrics() {
        let (runners, path, retired) = state.withLock { ($0.runners, $0.metricsFile, $0.retired) }
        guard let path else { return }
        let profiles = runners.map { runner in
            ProfileMetrics(profile: runner.profile.name,
                           totals: (retired[runner.profile.name] ?? RunTotals()) + runner.snapshot.totals,
                           census: counter.latest(runner.profile.name), destinationUp: runner.snapshot.online,
                           pausedReason: runner.snapshot.pausedReason)
        }
        metrics.write(MetricsText.render(profiles, now: clock.now), to: path)
    }

    /// `photos: 3 queued, 1 uploading, 2 in retry, 0 failed; docs: OFFLINE, 12 queued, …`
    private func statusText() -> String {
        let runners = state.withLock { $0.runners }
        return runners.map { runner in
            Self.statusPart(runner.profile.name, runner.snapshot, census: counter.latest(runner.profile.name))
        }.joined(separator: "; ")
    }

    /// One profile's part of the `STATUS=` line: why it is paused, if it is (`OFFLINE`,
    /// `PAUSED outside upload window`, `PAUSED route by an interface not allowed`), then its counts.
    static func statusPart(_ name: String, _ snapshot: ProfileSnapshot, census: SpoolCensus?) -> String {
        var text = "\(name): "
        switch snapshot.pausedReason {
        case .offline?: text += "OFFLINE, "
        case .outsideWindow?: text += "PAUSED outside upload window, "
        case .interface?: text += "PAUSED route by an interface not allowed, "
        case .rejected?: text += "PAUSED credentials refused, "
        case .hostKey?: text += "PAUSED server's host key does not match, "
        case nil: if !snapshot.online { text += "OFFLINE, " }
        }
        text += "\(snapshot.waiting) queued, \(snapshot.inFlight) uploading"
        if let census { text += ", \(census.retry.files) in retry, \(census.failed.files) failed" }
        return text
    }
}
