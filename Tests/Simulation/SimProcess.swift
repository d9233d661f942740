import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderCore
import UploaderValues

/// One run of the daemon process on the simulated machine: its view of the disk, its jobs, the
/// real executor, and the owner's state stepped by the real transition function. A crash ends
/// it; the next boot starts a new one on whatever the disk kept.
final class SimProcess: @unchecked Sendable {
    // Used by the simulator's thread, and by job threads only while they hold the baton.
    let view: ProcessView
    let scheduler: SimJobQueue
    /// The policy the core and the executor are given.
    let policy: ProfilePolicy
    /// The policy as configured, which the invariants hold the process to (a planted bug may
    /// give the core another).
    let configured: ProfilePolicy
    let spool: Spool
    /// Production's directory fsyncs, each checked as it returns (`syncMeansDurable`).
    let syncWitness: SyncWitness
    let lifecycle: FileLifecycle
    var executor: ProfileExecutor!
    /// Production's owner: its serial loop, stepped on the senders' threads, and its timer.
    private(set) var loop: ProfileLoop!
    /// The owner's timer (production's `DeadlineTimer`) and the deadline it waits for.
    let ticker: SimTicker
    /// The owner's state after its last step, as the loop's observer saw it.
    private(set) var state: ProfileState
    /// What the world checks as the owner takes an event in, hands an effect on, and ends a step.
    var taking: (ProfileEvent) -> Void = { _ in }
    var performing: (ProfileEffect) -> Void = { _ in }
    var stepped: () -> Void = {}
    private let finishedEffects = Mutex<[ProfileEffect]>([])
    /// When SIGTERM was taken in (monotonic) and its grace, to check the stop keeps to it.
    var stopRequested: (at: Double, grace: Double)?
    /// The owner has taken the stop event in (its grace counts from then).
    var stopTaken = false
    /// When this process started (wall clock): attempts opened before belong to a dead process.
    var bootedAt: Date = .distantPast
    /// Files the core had claimed in a transfer slot (`.claimAndUpload`): their claim's job opens
    /// the attempt before it reports the claim.
    var claimedInSlot: Set<RelativePath> = []
    /// The owner's slots, claims and ready files as the world saw them start and end.
    var seen = WorkSeen()
    /// Where production's hook runner runs its hooks, and the hook commands.
    let hookHost: SimHookHost
    /// Production's hook runner: one per profile for the life of the process.
    let hookRunner: HookRunner
    /// What the destination protocol learnt, kept across a reload as the daemon keeps it.
    let memory: DestinationMemory
    /// The spool's lock, taken at start-up as the runner takes it (`SpoolStartUp`); let go when
    /// the runner is released (a reload) or the process dies.
    var spoolLock: SpoolLock?

    /// `machineBoot`: the simulated machine's boot id, which a power cut changes. `continuing`:
    /// the runner a SIGHUP with changed settings stopped, in this same process. The new one takes
    /// over its view of the disk (the process, and the crash armed in it, go on), its hook runner
    /// with the hooks still queued, and what its destination learnt, as `ConfigReloader` hands
    /// them to the runner it starts.
    init(disk: SimDisk, server: SimServer, choices: ChoiceSource, baton: BatonScheduler, profile: Profile, clock: SimClock, logger: Logger,
         plant: Plant?, boot: Int, seed: UInt64, machineBoot: String, continuing previous: SimProcess? = nil) {
        scheduler = SimJobQueue(baton: baton)
        scheduler.wire.clock = clock
        view = previous?.view ?? ProcessView(disk: disk, scheduler: scheduler)
        // As the runner makes it (claims ahead included), a planted misreading of the config
        // included; the simulated machine's zone is UTC. The checks judge by the config itself.
        policy = ProfilePolicy(profile: profile, mode: .daemon, timeZone: .gmt)
        configured = PlantedBug.withNone { ProfilePolicy(profile: profile, mode: .daemon, timeZone: .gmt) }
        var fs: any SpoolFileSystem = view
        if let plant, plant.wrapsFileSystem { fs = PlantedFileSystem(inner: view, plant: plant, boot: boot) }
        // Temporary names counted from the seed, so a run replays exactly.
        // Directory fsyncs grouped, moves batched and ledger lines appended by production's code, its waits under the baton.
        syncWitness = SyncWitness(inner: DirectorySyncer(fs: fs, scheduler: baton), disk: disk)
        spool = Spool(paths: profile.spool, fs: fs, syncer: syncWitness, temporaries: TemporaryNames(start: seed >> 8), scheduler: baton)
        lifecycle = FileLifecycle(spool: spool, logger: logger, afterSend: profile.afterSend, scheduler: baton)
        state = ProfileState(seed: seed)
        ticker = SimTicker(clock: clock, baton: baton)
        scheduler.timer = ticker
        let view = self.view, scheduler = self.scheduler
        scheduler.makeTransport = {
            SimTransport(server: server, choices: choices, disk: view, scheduler: scheduler, plant: plant)
        }
        scheduler.newJob = { server.newJob() }
        // As the runner makes them: a rate limiter when `max_rate` ever limits, hooks on a runner of their own.
        let limiter = profile.maxRate.limitsSometimes ? RateLimiter(schedule: profile.maxRate, timeZone: .gmt, clock: clock) : nil
        memory = previous?.memory ?? DestinationMemory()
        hookHost = previous?.hookHost
            ?? SimHookHost(baton: baton, choices: choices, boot: boot, enabled: profile.onSent != nil || profile.onFailed != nil)
        hookRunner = previous?.hookRunner ?? HookRunner(clock: clock, host: hookHost)
        scheduler.hooks = hookHost
        scheduler.now = { clock.now }
        // Built once the process is whole: a changed delivery a claim brings back beside a new
        // file is posted as found, as the runner's claimer does.
        let claimer = Claimer(spool: spool, profileName: profile.name, digest: profile.digest, mimeTypes: MimeTypes(byExtension: [:]),
                              lifecycle: lifecycle, logger: logger, bootID: machineBoot,
                              foundBeside: { [weak self, spool] name in self?.post(.found(spool.queuedFiles([name]))) })
        let parts = ProfileExecutor.Parts(claimer: claimer, lifecycle: lifecycle, rateLimiter: limiter, probe: SimProbe(server: server),
                                          jobs: scheduler, hostname: "sim", environment: [:], memory: memory,
                                          threads: DestinationThreads(scheduler: baton, makeTransport: { scheduler.makeTransport() },
                                                                      remoteFileSession: { SimRemoteFileSession(transport: $0) }))
        executor = ProfileExecutor(profile: profile, spool: spool, parts: parts, hooks: hookRunner, logger: logger,
                                   clock: clock, report: { [weak self] event in self?.post(event) },
                                   finished: { [weak self] effect in self?.finishedEffects.withLock { $0.append(effect) } })
        scheduler.startWorkers(ProfileRunner.workerCount(for: policy), backgroundLimit: ProfileRunner.backgroundLimit(for: policy))
        loop = ProfileLoop(policy: policy, clock: clock, scheduler: baton, ticker: ticker, observer: Observer(process: self))
    }

    /// Starts the owner, as the runner does: the start-up's findings first, then whatever comes.
    func start(_ recovered: ProfileEvent) {
        loop.send(recovered)
        loop.start(state, name: "sim") { [weak self] effect in
            guard let self, !view.dead else { return }
            performing(effect)
            executor.perform(effect)
        }
    }

    /// Hands the loop's steps to the world's checks (none once the process is dead).
    private struct Observer: ProfileLoopObserver, @unchecked Sendable {
        unowned let process: SimProcess

        func taking(_ event: ProfileEvent) {
            guard !process.view.dead else { return }
            process.taking(event)
        }

        func stepped(_ state: ProfileState) {
            process.state = state
            guard !process.view.dead else { return }
            process.stepped()
        }
    }

    /// An event for the owner (from a job, the watcher, netlink, a signal), stepped at once by
    /// the sender unless another thread is stepping; dropped once the process is dead.
    func post(_ event: ProfileEvent) {
        guard !view.dead else { return }
        loop.send(event)
    }

    /// Takes `.drained`/`.stopped` effects seen so far.
    func takeFinished() -> [ProfileEffect] {
        finishedEffects.withLock { effects in
            defer { effects = [] }
            return effects
        }
    }
}
