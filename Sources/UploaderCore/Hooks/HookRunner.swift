import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// Runs a profile's `on_sent` / `on_failed` hooks one after another on a queue of their own,
/// so a slow or hanging hook never holds up an upload. What a run records is `DueHookRun`'s;
/// this type owns the queue, the backlog bound and the process running now.
///
/// One per profile for the life of the process: a runner restarted by a reload takes over its
/// predecessor's, so a hook due is never run twice at once by two generations.
package final class HookRunner: Sendable {
    /// Hooks waiting beyond this many are not queued (with a warning): a hook that cannot keep
    /// up must not grow the daemon's memory without bound. They stay due and run at the next start.
    static let maxBacklog = 10_000

    private let host: any HookHost
    let backlog = Mutex(0)
    /// The process group of the hook running now, to kill it when the daemon exits.
    private let running = Mutex<pid_t?>(nil)
    /// Set at exit just before the hook still running is killed: that run is not recorded as
    /// finished, so the hook runs again at the next start.
    private let exiting = Atomic<Bool>(false)

    let clock: any Clock

    /// `host`: where the runs happen and how a command runs (the system's unless given).
    package init(label: String = "hooks", clock: any Clock = SystemClock(), host: (any HookHost)? = nil) {
        self.clock = clock
        self.host = host ?? SystemHookHost(label: label)
    }

    /// Queues `job` (one hook's whole run); false when the backlog is full.
    func enqueue(_ job: @escaping @Sendable () -> Void) -> Bool {
        let accepted = backlog.withLock { count -> Bool? in
            if count >= 2 && PlantedBug.hookQueueOfOne.isActive { return nil }
            guard count < Self.maxBacklog else { return false }
            count += 1
            return true
        }
        guard let accepted else { return true }
        guard accepted else { return false }
        host.async { [self] in
            job()
            backlog.withLock { $0 -= 1 }
        }
        return true
    }

    /// Runs `process` to its end (from a queued job), where the exit path can kill it.
    func run(_ process: HookProcess) -> HookProcess.Outcome {
        host.launch(process, clock: clock) { pid in running.withLock { $0 = pid } }
    }

    /// True once the daemon has killed the hook running at its exit.
    var isExiting: Bool { exiting.load(ordering: .acquiring) }

    /// Waits until every queued hook has finished, at most until `deadline`; true when all did.
    package func waitUntilIdle(deadline: DispatchTime) -> Bool {
        host.waitUntilIdle(deadline: deadline)
    }

    /// At exit: gives the hooks still queued or running time to finish — a full `hook_timeout`
    /// after `run --once` (a cron run must not leave its last hooks to the next run), a few
    /// seconds for the daemon (systemd's stop timeout is counted from SIGTERM) — then kills the
    /// one running. Hooks not finished stay due and run at the next start.
    package static func drain(_ runners: [ProfileRunner], once: Bool, logger: Logger) {
        let wait = once ? (runners.map(\.profile.hookTimeout).max() ?? 0) + 2 : 5
        let deadline = DispatchTime.now() + wait
        for runner in runners where !runner.hooks.waitUntilIdle(deadline: deadline) {
            let left = runner.hooks.backlog.withLock { $0 }
            logger.warn("exiting with hooks still queued or running; killing the running one; they run at the next start",
                        ["profile": runner.profile.name, "hooks": String(left)])
            runner.hooks.exiting.store(true, ordering: .releasing)
            if let pid = runner.hooks.running.withLock({ $0 }) { ProcessIdentity.killGroup(pid) }
        }
    }
}
