import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// Hooks: which are due when a file is filed, and queueing them (`DueHookRun` carries each out).
extension ProfileExecutor {
    /// The final-state manifest names the hook due when that hook is configured (DESIGN §9);
    /// with none configured it has no `hooks` entry, and so nothing due ever.
    func markHookDue(_ manifest: inout Manifest) {
        switch manifest.state {
        case .sent where profile.onSent != nil, .failed where profile.onFailed != nil:
            manifest.markHookDue()
        default:
            break
        }
    }

    /// Queues the hook a file has due once filed at `target` in `area` (its marker is written).
    func afterFiling(_ target: RelativePath, in area: Spool.Area, manifest: Manifest) {
        guard let hook = manifest.dueHook else { return }
        queueHook(HookLedger.Marker(area: area, path: target, hook: hook))
    }

    /// After recovery finished a move (a claim, a rescan): the hook its manifest has due, if any.
    func queueDueHook(of target: RelativePath, in area: Spool.Area) {
        guard case .success(let manifest) = spool.readManifest(for: target, in: area) else { return }
        afterFiling(target, in: area, manifest: manifest)
    }

    /// Start-up, before any claim: queues every hook left due (a listing of `.hooks-due/`, one
    /// manifest read per marker — never a read of sent/).
    package func queueDueHooks() {
        let due = HookLedger(spool: spool).dueMarkers(afterSend: profile.afterSend) { problem in
            logger.log(problem.level, problem.what,
                       pairs: [("profile", profile.name), ("file", problem.path)] + (problem.error.map { [("error", $0)] } ?? []))
        }
        for marker in due { queueHook(marker) }
        if !due.isEmpty { logger.info("running hooks left due", ["profile": profile.name, "hooks": String(due.count)]) }
    }

    private func queueHook(_ marker: HookLedger.Marker) {
        let run = DueHookRun(profile: profile, spool: spool, hooks: hooks, environment: environment, logger: logger)
        guard hooks.enqueue({ run.run(marker) }) else {
            return logger.warn("hook backlog full; the hook runs at the next start",
                               ["profile": profile.name, "hook": marker.hook, "file": marker.path.displayed(in: spool.directory(marker.area))])
        }
    }
}
