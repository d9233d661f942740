import Foundation
import UploaderSupport

/// Where a profile's hook runs are carried out, one after another, and how each command is run.
/// The daemon's is `SystemHookHost` (a serial dispatch queue, a spawned process); the simulator
/// brings its own, so its schedules run `DueHookRun` as the daemon does, with hooks it can crash,
/// fail and count.
package protocol HookHost: Sendable {
    /// Runs `job` after every job handed over before it has finished.
    func async(_ job: @escaping @Sendable () -> Void)
    /// Waits until every job handed over has finished, at most until `deadline`; true when all did.
    func waitUntilIdle(deadline: DispatchTime) -> Bool
    /// Runs one hook command to its end; `started` hears its process group while it runs, nil once it is reaped.
    func launch(_ process: HookProcess, clock: any Clock, started: (pid_t?) -> Void) -> HookProcess.Outcome
}

/// The daemon's hook host: one serial dispatch queue per runner, each command a spawned process.
package final class SystemHookHost: HookHost {
    private let queue: DispatchQueue
    private let group = DispatchGroup()

    package init(label: String) { queue = DispatchQueue(label: "uploader.\(label)") }

    package func async(_ job: @escaping @Sendable () -> Void) { queue.async(group: group, execute: job) }

    package func waitUntilIdle(deadline: DispatchTime) -> Bool { group.wait(timeout: deadline) == .success }

    package func launch(_ process: HookProcess, clock: any Clock, started: (pid_t?) -> Void) -> HookProcess.Outcome {
        process.run(clock: clock, started: started)
    }
}
