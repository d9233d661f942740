import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderCore
import UploaderDaemon

/// One generated schedule: a spool on a simulated disk, the real transition function, executor,
/// claims, lifecycle and recovery, a scripted server, producers, an operator, a flapping network,
/// and crashes (kill -9 or power cut) at any disk operation — all decided by one choice source.
/// After every step the invariants are checked; at the end the faults stop and every file
/// must reach `sent/` or `failed`.
final class Simulation {
    struct Options: Sendable {
        var model: SimDisk.Model
        var steps = 400
        /// The planted bug, if any (`simulate --plant NAME`).
        var plant: Plant?
        /// Every schedule's destination, whatever it draws (`simulate --destination NAME`); else
        /// the plant's, if it lives in one.
        var destination: SimDestination?
        /// Keep the log lines (for `--replay`).
        var keepLog = false
    }

    let options: Options
    let choices: ChoiceSource
    /// Runs the process's threads one at a time, the next drawn from `choices`.
    let baton: BatonScheduler
    let clock: SimClock
    let disk: SimDisk
    /// The machine's file locks, which the daemon and `uploader retry` take.
    let fileLocks: SimFileLocks
    /// `uploader retry --all` running beside the daemon, until the world has heard all it moved.
    private var retryCommand: SimRetryCommand?
    /// The last `uploader retry` exited 1: the operator runs it again once the faults have stopped.
    private var retryToRunAgain = false
    let server = SimServer()
    /// The schedule's `uploader.conf`, drawn from the seed and read by production's loader (as
    /// edited since: `reloadConfig`).
    private(set) var config: SimConfig
    private(set) var profile: Profile
    /// An edit of `uploader.conf` whose SIGHUP stopped the runner: the next one starts with it.
    private var editPending: SimConfig?
    /// Every `max_attempts` the schedule ran with: a file may have failed under any of them.
    private(set) var maxAttemptsSeen: Set<Int> = []
    let logger: Logger
    var process: SimProcess!
    var producer: Producer
    /// What the world saw moved into `.quarantine/`.
    let quarantineWatch: QuarantineWatch
    private(set) var trace: [String] = []
    private(set) var log: [String] = []
    private(set) var violation: Violation?
    /// While the end's checks are tried (`endChecksPassNow`): whether one failed. Nil otherwise.
    var trialFailed: Bool?
    private(set) var powerCuts = 0
    private(set) var crashes = 0
    private var generation = 0
    /// The faults have stopped: no more crashes are armed.
    private var settling = false
    /// Seconds the wall clock was set back in all, over the schedule: due times and passes over
    /// sent/ the daemon set before a jump back come that much later in simulated time.
    var wallClockSetBack: Double = 0
    /// The owner stopped (on whichever thread stepped it): the world starts the next process at its next step.
    private var restartPending = false
    /// The disk's fault count when this process started: a record the disk refused to rewrite
    /// since may still say `uploading` (the daemon logs it and goes on), so the checks that read
    /// the outbox's records for open attempts stand down until the next start.
    var faultsAtBoot = 0
    /// How many requests had reached the server at the last power cut.
    private(set) var requestsBeforeLastPowerCut = 0
    /// Contents a claim filed as unreadable after a power cut: their record has no hash, so their
    /// key names them by ctime, as with `digest = none` (`duplicatesShareKey`).
    var unhashedAfterPowerCut: Set<String> = []
    /// The hooks' commands the world saw start.
    let hookLog = SimHookLog()
    /// What the world told the daemon of each file (`orderWithinSlots`).
    var told = ToldFacts()
    /// Bytes the daemon took out of sent/ otherwise than by deleting them (a changed file brought
    /// back to the outbox) since sent/ was last listed from its top: a retention pass counted
    /// them in its total (`sentRemovedOnlyAsAllowed`).
    var sentMovedOutSinceListing: Int64 = 0
    /// Sizes of the manifests the daemon unlinked in sent/ since that listing, by path.
    var sentManifestsUnlinked: [String: Int64] = [:]

    static let spoolRoot = "/spool"

    init(options: Options, choices: ChoiceSource) {
        self.options = options
        self.choices = choices
        baton = BatonScheduler(choices: choices)
        fileLocks = SimFileLocks(baton: baton)
        let clock = SimClock(start: Date(timeIntervalSince1970: 1_800_000_000), scheduler: baton)
        self.clock = clock
        // The world waits for the workers (a dead process's, a stop's) while one sleeps on the
        // clock: time passes for it, in the rate limiter's short steps (a bound stops a livelock).
        var movesWhileAllWait = 0
        baton.timeMoves = { [weak clock] in
            guard let clock, clock.sleeping > 0, movesWhileAllWait < 100_000 else { return false }
            movesWhileAllWait += 1
            clock.advance(by: 0.1)
            return true
        }
        disk = SimDisk(model: options.model, now: { clock.now })
        config = SimConfig(spoolRoot: Self.spoolRoot, choices: choices, forced: options.destination)
        let profile = config.profile
        self.profile = profile
        maxAttemptsSeen = [profile.maxAttempts]
        quarantineWatch = QuarantineWatch(paths: profile.spool)
        let collect = options.keepLog
        let lines = LineBox()
        logger = Logger(level: collect ? .debug : .error, clock: clock, sink: { line in if collect { lines.append(line) } })
        logLines = lines
        if collect { disk.logOperations() }
        server.now = { clock.now }
        server.retryAfterCap = profile.maxBackoff
        server.speak(config.destination, choices: choices)
        // Never careless for another user's files: see `Producer.careless`.
        let foreign = choices.chance(30)
        producer = Producer(disk: disk, outbox: profile.spool.outbox, choices: choices, foreign: foreign, recursive: profile.recursive,
                            careless: !foreign && choices.chance(25))
        disk.fileSyncPersistsNewEntry = options.model == .noJournal && choices.chance(50)
    }

    private let logLines: LineBox

    /// Runs the schedule; returns the first violation, if any.
    func run() -> Violation? {
        // A plant that lives in production code is switched on for this schedule's threads alone.
        let outside = PlantedBug.active
        PlantedBug.switchOn(options.plant?.inProduction)
        defer { PlantedBug.switchOn(outside) }
        // The machine as installed: the spool's directories exist, durably (the package makes them).
        for directory in ["/incoming", profile.spool.outbox, profile.spool.outboxTemporary, profile.spool.sent, profile.spool.retry] {
            try? disk.makeDirectories(directory)
        }
        for directory in ["/", Self.spoolRoot, profile.spool.outbox] {
            try? disk.syncDirectory(of: RelativePath("x"), in: directory)
        }
        note("config: \(config.summary)")
        if options.model == .noJournal {
            note(disk.fileSyncPersistsNewEntry ? "disk: ext4 without a journal (a file's fsync persists its new entries)"
                 : "disk: ext2 (only a directory's fsync persists its entries)")
        }
        drawDiskFaults()
        if producer.foreign { note("the producer is another user: its files cannot be linked by the daemon") }
        if producer.careless { note("the producer never fsyncs what it writes in place") }
        boot()
        var step = 0
        while step < options.steps && violation == nil {
            step += 1
            act()
            afterStep()
        }
        if violation == nil { settle() }
        if options.keepLog { log = logLines.lines }
        if violation != nil { endMidStep() }
        process.scheduler.retire()
        return violation
    }

    /// A violation ended the schedule with the process mid-step: it dies as at a crash, and its
    /// threads run until none can (a job asleep on the clock, the rate limiter's, is woken), so
    /// that none still waits for work the world no longer gives when the process is dropped.
    private func endMidStep() {
        process.view.end()
        retryCommand?.view.end()
        for _ in 0..<10_000 {
            if clock.sleeping > 0 { clock.advance(by: 0.1) }
            guard process.scheduler.runnable.workers > 0 else {
                if clock.sleeping == 0 { return }
                continue
            }
            process.scheduler.baton.letWorkersRun()
        }
    }

    // MARK: The process

    /// Starts the daemon on what the disk holds: prepare, recovery, the owner's first event. The
    /// process before it has ended: its jobs ran to their end (on a dead process, failing).
    /// `continuing`: a SIGHUP with changed settings stopped that runner, and its process goes on
    /// with a new one (`ConfigReloader`): the same view of the disk, hook runner and destination memory.
    func boot(continuing previous: SimProcess? = nil) {
        if previous == nil { generation += 1 }
        restartPending = false
        // The hook queue goes on with the new runner.
        if previous != nil { process.scheduler.hooks = nil }
        process?.scheduler.retire()
        process = SimProcess(disk: disk, server: server, choices: choices, baton: baton, profile: profile, clock: clock, logger: logger,
                             plant: options.plant, boot: generation, seed: choices.next(), machineBoot: "sim-boot-\(powerCuts)",
                             continuing: previous)
        process.view.locks = fileLocks
        // Crashes during start-up recovery are part of the game.
        if !settling && !process.view.armed && choices.chance(8) { armCrash() }
        process.taking = { [unowned self] event in taking(event) }
        process.performing = { [unowned self] effect in checkBefore(effect) }
        process.stepped = { [unowned self] in stepped() }
        // The one moment a record may newly say `uploading` with a request behind it.
        process.scheduler.requestLeaves = { [unowned self] in
            check(.recordsWithinSlots)
            check(.uploadsWithinWindows)
        }
        process.scheduler.wire.duration = { [unowned self] in wireTime() }
        process.hookHost.ran = { [unowned self] run in hookStarted(run) }
        process.view.unlinking = { [unowned self] path, directory in daemonUnlinks(path, in: directory) }
        process.view.listing = { [unowned self] path, directory in daemonLists(path, in: directory) }
        // A restart takes a moment: what the dead process wrote is stamped before this one started.
        clock.advance(by: 0.01)
        // Past any jump of the wall clock back: an attempt stamped before it is not this process's.
        process.bootedAt = clock.latestWall
        faultsAtBoot = disk.faultsDrawn
        note(previous == nil ? "boot #\(generation)" : "runner restarted with the edited config")
        do {
            process.spoolLock = try SpoolStartUp.take(process.spool, clock: clock, processID: Self.daemonProcessID)
        } catch let failure as SpoolLock.Failure {
            if case .heldBy = failure { return fail(.oneProcessPerSpool, "the daemon could not take its spool's lock at start: \(failure)") }
            return crashed()
        } catch {
            return crashed()
        }
        let recovery = Recovery(spool: process.spool, lifecycle: process.lifecycle, ignore: IgnoreRules(patterns: profile.ignore),
                                recursive: profile.recursive, logger: logger, clock: clock)
        let retries = recovery.scanRetry()
        let scan = recovery.scanOutbox()
        // As the runner does: after recovery (which finishes cut moves and writes their markers), before any claim.
        process.executor.queueDueHooks()
        if process.view.dead { return crashed() }
        process.start(.recovered(files: process.spool.queuedFiles(retries.requeued + scan.files),
                                retries: (retries.due + scan.retries).map { RetryEntry(path: $0.path, due: $0.at) },
                                ignoredDirectories: []))
        check(.manifestsParse)
    }

    private func armCrash() {
        let kind: ProcessView.CrashKind = choices.chance(50) ? .powerCut : .kill
        let after = 1 + choices.below(120)
        process.view.arm(after: after, kind: kind)
        note("crash armed: \(kind.rawValue) at the \(after)th system call from now")
    }

    /// The process died at its armed disk call: the threads of the dead process end (their
    /// calls fail), the disk keeps what the crash lets it keep, and the daemon starts again.
    private func crashed() {
        // The kernel lets a dead process's locks go.
        process.spoolLock = nil
        quarantineWatch.look(disk)
        // A job of the dead process asleep on the clock (the rate limiter) wakes to end with it.
        if clock.sleeping > 0 { clock.advance(by: 0.1) }
        process.scheduler.forget()
        switch process.view.crashKind {
        case .kill:
            crashes += 1
            disk.killProcess()
        case .powerCut:
            powerCuts += 1
            requestsBeforeLastPowerCut = server.requests.count
            var generator = ChoiceGenerator(source: choices)
            disk.powerCut(&generator)
            // The machine goes down with every process on it.
            retryCommand?.view.end()
            rememberFinishedHooks()
            server.reachable = server.reachable || choices.chance(50)
        }
        note("\(process.view.crashKind.rawValue)")
        hookLog.afterCrash(powerCut: process.view.crashKind == .powerCut) { [disk, profile] in disk.contents(profile.spool.retry + "/" + $0) }
        server.forgetDueTimes(keeping: dueTimesKept())
        producer.afterCrash(powerCut: process.view.crashKind == .powerCut) { [disk, profile] in
            let view = SpoolView(disk: disk, paths: profile.spool)
            return view.files.map { ($0.inode, Producer.hash($0.content), $0.content) } + view.adoptionLeftovers.map { (nil, Producer.hash($0), nil) }
        }
        check([.noFileLost, .manifestsParse, .quarantineKeepsRecords])
        // The file was edited: whatever became of its SIGHUP, the next process reads it.
        if let edited = editPending { adopt(edited) }
        boot()
    }

    // MARK: Steps

    enum Action: Int, CaseIterable {
        case runJob, advanceClock, produce, network, serverMood, operatorAction, crash
    }

    static let weights = [30, 10, 10, 4, 0, 3, 3]

    private func act() {
        if restartIfStopped() { return }
        let runnable = process.scheduler.runnable
        var weights = Self.weights
        if runnable.workers + runnable.probes == 0 { weights[Action.runJob.rawValue] = 0 }
        if process.view.armed || process.stopRequested != nil { weights[Action.crash.rawValue] = 0 }
        switch Action(rawValue: choices.pick(weights))! {
        case .runJob: runJob()
        case .advanceClock:
            if choices.chance(4) { jumpWallClock() } else { advanceClock(limit: Double(choices.below(6000)) / 1000) }
        case .produce: produce()
        case .network:
            server.reachable.toggle()
            // Now and then the link comes and goes with no rtnetlink event: only the probe learns of it.
            let silent = choices.chance(30)
            note("network \(server.reachable ? "up" : "down")\(silent ? " (no event)" : "")")
            if !silent { process.post(.networkChanged) }
        case .serverMood: break
        case .operatorAction: operatorAction()
        case .crash: armCrash()
        }
    }

    /// Production's owner (`ProfileLoop`) takes an event in, on whichever thread steps it.
    private func taking(_ event: ProfileEvent) {
        note("event \(Self.describe(event))")
        checkOnTaking(event)
        if case .stop(let grace) = event, process.stopRequested == nil || process.stopTaken == false {
            // The grace runs from when the owner takes the signal in.
            process.stopRequested = (clock.monotonic, grace)
            process.stopTaken = true
        }
    }

    /// The owner has stepped an event and handed its effects on.
    private func stepped() {
        for finished in process.takeFinished() where finished == .stopped { stoppedCleanly() }
        checkOnlineMeansWorking()
    }

    /// The workers run (the baton comes back at one of their seam calls, or once none can run),
    /// or a probe answers.
    func runJob() {
        let runnable = process.scheduler.runnable
        let workers = runnable.workers > 0 ? 1 : 0
        guard workers + runnable.probes > 0 else { return }
        let pick = choices.below(workers + runnable.probes)
        if pick < workers {
            note("jobs run")
            process.scheduler.baton.letWorkersRun()
        } else {
            note("probe")
            process.scheduler.runProbe(pick - workers)
        }
    }

    /// Once the owner has stopped: as `ProfileRunner.stop` goes on, the workers finish the jobs
    /// they hold and exit, and the stop is over only then — what must keep to the grace is that,
    /// not the owner's `stopped`. Then the next process (or runner) starts. True if the owner had stopped.
    private func restartIfStopped() -> Bool {
        guard restartPending, !process.view.dead else { return false }
        restartPending = false
        process.scheduler.shutDown()
        // A crash armed in a job's last disk calls: the world restarts the process as after any crash.
        if process.view.dead { return true }
        if let stop = process.stopRequested, clock.monotonic - stop.at > stop.grace + 1 {
            fail(.shutdownWithinGrace, "the workers exited \(clock.monotonic - stop.at) s after SIGTERM with a \(stop.grace) s grace")
            return true
        }
        note("stopped; restarting")
        restart()
        return true
    }

    /// Time passes, never beyond the owner's next timer (a real timer fires at its deadline).
    func advanceClock(limit: Double) {
        // During a stop, time runs to the end of the grace; past it, only while every job waits
        // on the wire (`SimWire`) with no event to take: what can run takes milliseconds.
        var limit = limit
        if let stop = process.stopRequested, process.stopTaken {
            let left = stop.at + stop.grace - clock.monotonic
            if left > 0 {
                limit = min(limit, left)
            } else if clock.sleeping > 0 {
                // A job waiting on the clock (the rate limiter's short sleeps) still moves in its own time.
                limit = min(limit, 0.1)
            } else if process.scheduler.runnable.workers > 0 {
                return
            }
        }
        // The owner's timer (production's) wakes as the clock passes its deadline, and ticks when it runs.
        let deadline = [process.ticker.wakesBy, process.scheduler.wire.nextDeadline].compactMap { $0 }.min().map { max(0, $0 - clock.monotonic) }
        let step = min(limit, deadline ?? limit)
        clock.advance(by: step)
        note("clock +\(LogNumbers.fixed(step, places: 3)) s")
    }

    private func produce() {
        if let path = disk.withoutFaults({ producer.act(note: { note($0) }) }) {
            // The watcher: an event for the name, unless inotify's queue overflowed: then the
            // watcher asks the runner for production's rescan (`ProfileExecutor.rescan`), on its thread.
            if choices.chance(90) {
                process.post(.found(process.spool.queuedFiles([path])))
            } else {
                note("inotify overflow: rescan")
                process.executor.rescan()
            }
        }
    }

    /// The daemon's pid in its lock file, and a second instance's: the simulated processes share
    /// the test's own.
    static let daemonProcessID: Int32 = 1_001
    static let secondInstanceProcessID: Int32 = 1_002

    /// `uploader run --once` (or a second `uploader run`) starts beside the daemon: a process of
    /// its own that goes through production's start-up (`SpoolStartUp`) and must stop at the
    /// spool's lock, before it reads anything of the spool. Taking it is `oneProcessPerSpool`.
    private func startSecondInstance() {
        guard process.spoolLock != nil, !process.view.dead else { return }
        note("cron: uploader run --once beside the daemon")
        let view = ProcessView(disk: disk, scheduler: SimJobQueue(baton: baton))
        view.locks = fileLocks
        let spool = Spool(paths: profile.spool, fs: view, temporaries: TemporaryNames(start: 0), scheduler: baton)
        do {
            let taken = try SpoolStartUp.take(spool, clock: clock, processID: Self.secondInstanceProcessID)
            fail(.oneProcessPerSpool, "a second uploader took \(taken.path) while the daemon of boot #\(generation) holds it")
        } catch let failure as SpoolLock.Failure {
            // The daemon's pid, or none when its stamp could not be written (a refused write).
            guard case .heldBy(let pid, _) = failure, pid == nil || pid == Self.daemonProcessID else {
                return fail(.oneProcessPerSpool, "the second uploader stopped, but not at the daemon's lock: \(failure)")
            }
            note("second uploader: \(failure)")
        } catch {
            note("second uploader: cannot prepare the spool: \(error)")
        }
        view.end()
    }

    /// `uploader retry --all` starts.
    private func startRetryCommand() {
        note("operator: uploader retry --all")
        // It resets the due time of each file it moves back (one whose record it cannot read: any).
        retryCommand = SimRetryCommand(disk: disk, baton: baton, locks: fileLocks, paths: profile.spool, logger: logger, seed: choices.next() >> 8,
                                       movesBack: { [server] record in server.forgetDueTimes(of: record?.id) },
                                       tookBack: { [unowned self] failed, name, record in tookBack(failed, from: name, record: record) })
    }

    private func operatorAction() {
        switch choices.below(4) {
        case 0:
            // `uploader retry --all`, while the daemon runs: a process of its own (one at a time);
            // while it runs, cron starts `uploader run --once` beside the daemon instead.
            guard retryCommand == nil else { return startSecondInstance() }
            startRetryCommand()
        case 1 where process.stopRequested == nil:
            let grace = profile.shutdownGrace
            note("operator: SIGTERM (grace \(grace) s)")
            process.stopRequested = (clock.monotonic, grace)
            process.post(.stop(grace: grace))
        case 2 where process.stopRequested == nil:
            reloadConfig()
        default:
            guard process.stopRequested == nil else { return }
            // Another overflow of inotify's queue, with no file of the producer's lost in it.
            note("inotify overflow: rescan")
            process.executor.rescan()
        }
    }

    /// SIGHUP after an operator edited `uploader.conf`, as `ConfigReloader` applies it to the
    /// profile: with the same settings the runner goes on, told the credentials may have changed;
    /// with others it stops, draining for its grace, and one with the new settings starts in the
    /// same process (`boot(continuing:)`) once it has.
    private func reloadConfig() {
        let edited = SimConfig(editing: config, choices: choices)
        guard !ConfigReloader.sameSettings(profile, edited.profile) else {
            note("operator: SIGHUP, settings unchanged")
            process.post(.credentialsChanged)
            return
        }
        note("operator: SIGHUP, edited: \(edited.edits(from: config))")
        editPending = edited
        let grace = profile.shutdownGrace
        process.stopRequested = (clock.monotonic, grace)
        process.post(.stop(grace: grace))
    }

    /// The config the next runner starts with.
    private func adopt(_ edited: SimConfig) {
        editPending = nil
        config = edited
        profile = edited.profile
        maxAttemptsSeen.insert(profile.maxAttempts)
    }

    /// After a stop: the runner an edit waits for, or (after SIGTERM) a new process.
    private func restart() {
        // The stopped runner lets its lock go: its process exits (SIGTERM), or the reload
        // releases it (`ProfileRunner.release`) before the new runner takes it.
        process.spoolLock = nil
        guard let edited = editPending else { return boot() }
        adopt(edited)
        boot(continuing: process)
    }

    /// The owner stopped after SIGTERM or SIGHUP, mid-step (on the world's thread or a job's):
    /// at its next step the world waits for the workers to exit, checks the stop kept to the
    /// grace, and starts the next process or runner (`restartIfStopped`).
    private func stoppedCleanly() {
        restartPending = true
    }

    private func afterStep() {
        hearRetryCommand()
        if process.view.dead { return crashed() }
        check(.neverTwoUploadsAtOnce)
        check(.noAttemptBeforeDue)
        check(.deadlinesKept)
        check(.syncMeansDurable)
        checkProtocols()
        if trace.count % 25 == 0 { check(.maxAttemptsRespected) }
    }

    // MARK: The end: faults stop, everything must arrive

    /// No more faults: the server answers 201, the link stays up, time moves as the timers ask.
    private func settle() {
        settling = true
        disk.injectFaults(nil)
        server.healed = true
        if !server.reachable {
            server.reachable = true
            process.post(.networkChanged)
        }
        note("faults stop")
        // With upload windows or retention the owner always has a deadline (a window's edge, the
        // next pass over sent/), so the quiet below may never come: one look now finds what an
        // overflowed inotify queue left unseen.
        process.executor.rescan()
        var rescans = 0
        var failedTrial: EndChecksInput?
        var trials = EndChecksTrials(from: clock.monotonic)
        // Outside its windows the owner sleeps until the next day's; a retry's due time is on the
        // wall clock, which jumps may have set back (by up to two hours each). Each pass over sent/ due
        // meanwhile (every 0.7 s with `keep_sent = 7s`) takes a few steps.
        // A periodic rescan (`rescan`) walks the outbox as a job, a score of steps each.
        var budget = profile.uploadWindows.isAlways ? 20_000 : 100_000
        let horizon: Double = (profile.uploadWindows.isAlways ? 3_600 : 86_400) + wallClockSetBack
        if let every = process.policy.retention?.every { budget += Int(6 * horizon / max(every, 0.5)) }
        if profile.rescan > 0 { budget += Int(20 * horizon / max(profile.rescan, 1)) }
        // Whatever settles does so within the horizon; a schedule whose end checks still fail
        // twice that long after the faults stopped never will, and its failure is reported now
        // rather than after simulated years of window edges or rescans that change nothing.
        let giveUpAt = clock.monotonic + 2 * horizon
        var turns = 0
        while turns < budget, violation == nil, clock.monotonic < giveUpAt {
            turns += 1
            hearRetryCommand()
            if process.view.dead { crashed(); continue }
            if restartIfStopped() { continue }
            let runnable = process.scheduler.runnable
            if runnable.workers + runnable.probes > 0 {
                runJob()
            } else if clock.sleeping > 0 {
                // A job waits on the clock (the rate limiter's short sleeps): time moves for it, in small steps.
                advanceClock(limit: 0.1)
            } else if process.ticker.due != nil || process.scheduler.wire.nextDeadline != nil {
                // Nothing runs and every end check holds already: what is left is window edges and
                // passes over sent/ with nothing to do, which could go on for simulated years.
                if process.scheduler.wire.nextDeadline == nil, process.stopRequested == nil, trials.due(at: clock.monotonic) {
                    if endChecksPassNow(failedOn: &failedTrial) { break }
                    trials.failed(at: clock.monotonic)
                }
                if skipToTheWindow() { continue }
                advanceClock(limit: 3600)
            } else {
                // Quiet: a last look or two, as a periodic rescan would (inotify may have overflowed).
                rescans += 1
                if rescans > 2 { break }
                process.executor.rescan()
                continue
            }
            check(.neverTwoUploadsAtOnce)
            check(.noAttemptBeforeDue)
            check(.deadlinesKept)
            check(.syncMeansDurable)
            checkProtocols()
        }
        guard violation == nil else { return }
        check(Invariant.atTheEnd)
    }

    /// Once the faults have stopped and nothing runs, outside every upload window nothing but the
    /// owner's periodic looks can happen until the next window opens, and they find what the last
    /// one found: the clock goes to the opening at once (the owner's timer ticks late, once, as
    /// after a pause). A `rescan = 3s` outside a window that opens the next day is otherwise
    /// 27,000 walks of the outbox. True when it moved the clock.
    private func skipToTheWindow() -> Bool {
        let window = process.configured.windows.phase(at: clock.now, in: .gmt)
        guard !window.open, let opens = window.until, process.scheduler.wire.nextDeadline == nil, process.stopRequested == nil,
              clock.sleeping == 0, let due = process.ticker.wakesBy, opens.timeIntervalSince(clock.now) > due - clock.monotonic
        else { return false }
        let step = opens.timeIntervalSince(clock.now)
        clock.advance(by: step)
        note("clock +\(LogNumbers.fixed(step, places: 3)) s (to the window's opening)")
        return true
    }

    /// The daemon's watcher sees the files `uploader retry` moved back arrive in the outbox. One
    /// that exited 1 (a file it could not move back) is run again by the operator once the
    /// faults have stopped.
    private func hearRetryCommand() {
        guard let command = retryCommand else {
            if settling && retryToRunAgain { retryToRunAgain = false; startRetryCommand() }
            return
        }
        let moved = command.takeMoved()
        if !moved.isEmpty { process.post(.found(process.spool.queuedFiles(moved))) }
        guard command.finished else { return }
        retryCommand = nil
        if command.failed { retryToRunAgain = true }
    }

    // MARK: Bookkeeping

    func note(_ line: String) {
        if options.keepLog {
            // A replay shows what happened on the disk and in the log between two steps, in place.
            trace.append(contentsOf: disk.takeOperationLog())
            trace.append(contentsOf: logLines.lines[loggedInTrace...].map { "  log: " + $0 })
            loggedInTrace = logLines.lines.count
        }
        trace.append(line)
        if Self.traceLive { FileHandle.standardError.write(Data((line + "\n").utf8)) }
    }

    /// `SIMULATE_TRACE_LIVE=1`: each trace line goes to stderr as it is made (a replay that dies,
    /// e.g. on a simulated deadlock, still shows how it got there).
    private static let traceLive = ProcessInfo.processInfo.environment["SIMULATE_TRACE_LIVE"] == "1"

    /// How many log lines the trace already shows (replays only).
    private var loggedInTrace = 0

    func fail(_ invariant: Invariant, _ detail: String) {
        if trialFailed != nil { trialFailed = true; return }
        guard violation == nil else { return }
        violation = Violation(invariant: invariant, detail: detail, step: trace.count)
        note("VIOLATION \(invariant.rawValue): \(detail)")
    }

    static func describe(_ event: ProfileEvent) -> String {
        switch event {
        case .recovered(let files, let retries, _): return "recovered(\(files.count) files, \(retries.count) retries)"
        case .found(let files): return "found(\(files.map(\.path.logSafe).joined(separator: ",")))"
        case .retriesFound(let entries): return "retriesFound(\(entries.count))"
        case .directoriesIgnored: return "directoriesIgnored"
        case .claimed(let p, let r): return "claimed(\(p.logSafe), \(r))"
        case .attempted(let p, let r): return "attempted(\(p.logSafe), \(r.outcome))"
        case .recordRewritten(let p): return "recordRewritten(\(p.logSafe))"
        case .settled(let p, let r): return "settled(\(p.logSafe), \(r))"
        case .movedBack(let p, let to): return "movedBack(\(p.logSafe) → \(to?.path.logSafe ?? "nil"))"
        case .recordWithoutFile(let p): return "recordWithoutFile(\(p.logSafe))"
        case .moveBackFailed(let p): return "moveBackFailed(\(p.logSafe))"
        case .quarantined(let p, let r): return "quarantined(\(p.logSafe), \(r))"
        case .sentSwept: return "sentSwept"
        case .rescanned: return "rescanned"
        case .probed(let t, let problem): return "probed(#\(t.number), \(problem ?? "ok"))"
        case .networkChanged: return "networkChanged"
        case .routeChecked(let report): return "routeChecked(\(report))"
        case .credentialsChanged: return "credentialsChanged"
        case .tick: return "tick"
        case .stop(let grace): return "stop(grace \(grace))"
        }
    }
}

/// Log lines kept for a replay.
final class LineBox: @unchecked Sendable {
    // Appended to by the thread holding the baton only.
    private(set) var lines: [String] = []
    func append(_ line: String) { lines.append(line) }
}
