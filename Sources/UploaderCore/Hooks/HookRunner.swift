@preconcurrency import Glibc
import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// Runs a profile's `on_sent` / `on_failed` hooks one after another on a queue of their own,
/// so a slow or hanging hook never holds up an upload; a failure is logged, nothing more.
package final class HookRunner: Sendable {
    /// Hooks waiting beyond this many are dropped (with a warning): a hook that cannot keep up
    /// must not grow the daemon's memory without bound.
    static let maxBacklog = 10_000

    private let queue: DispatchQueue
    let backlog = Mutex(0)
    /// The process group of the hook running now, to kill it when the daemon exits.
    private let running = Mutex<pid_t?>(nil)
    private let group = DispatchGroup()

    private let clock: any Clock

    package init(label: String = "hooks", clock: any Clock = SystemClock()) {
        self.clock = clock
        queue = DispatchQueue(label: "uploader.\(label)")
    }

    /// Queues `process`, run for `hook` (`on_sent`/`on_failed`) of `file` in `profile`.
    func enqueue(_ process: HookProcess, logger: Logger, profile: String, hook: String, file: String) {
        let accepted = backlog.withLock { count -> Bool in
            guard count < Self.maxBacklog else { return false }
            count += 1
            return true
        }
        guard accepted else {
            logger.warn("hook backlog full; hook not run", ["profile": profile, "hook": hook, "file": file])
            return
        }
        queue.async(group: group) { [self] in
            let started = clock.monotonic
            let outcome = process.run(clock: clock) { pid in running.withLock { $0 = pid } }
            backlog.withLock { $0 -= 1 }
            let duration = LogNumbers.fixed(clock.monotonic - started, places: 3) + "s"
            if outcome == .exited(0) {
                logger.debug("hook finished", ["profile": profile, "hook": hook, "file": file, "duration": duration])
            } else {
                logger.warn("hook failed; the file's state is unchanged",
                            ["profile": profile, "hook": hook, "file": file, "outcome": outcome.description, "duration": duration])
            }
        }
    }

    /// Waits until every queued hook has finished, at most until `deadline`; true when all did.
    package func waitUntilIdle(deadline: DispatchTime) -> Bool {
        group.wait(timeout: deadline) == .success
    }

    /// At exit: gives the hooks still queued or running time to finish — a full `hook_timeout`
    /// after `run --once` (a cron run must not drop its last hooks), a few seconds for the
    /// daemon (systemd's stop timeout is counted from SIGTERM) — and says how many never ran.
    package static func drain(_ runners: [ProfileRunner], once: Bool, logger: Logger) {
        let wait = once ? (runners.map(\.profile.hookTimeout).max() ?? 0) + 2 : 5
        let deadline = DispatchTime.now() + wait
        for runner in runners where !runner.hooks.waitUntilIdle(deadline: deadline) {
            let left = runner.hooks.backlog.withLock { $0 }
            logger.warn("exiting with hooks still queued or running; killing the running one, the rest are not run",
                        ["profile": runner.profile.name, "hooks": String(left)])
            if let pid = runner.hooks.running.withLock({ $0 }) { kill(-pid, SIGKILL) }
        }
    }
}
