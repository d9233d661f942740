@preconcurrency import Glibc
import Foundation
import UploaderSupport
import UploaderCore

/// One run of a hook command on the simulated machine, as the world saw it start.
struct SimHookRun: Sendable {
    /// `on_sent` or `on_failed`.
    var hook: String
    /// The file's Idempotency-Key (`UPLOADER_ID`).
    var id: String
    /// The paths the command was given: the file and its manifest.
    var file: String
    var manifest: String
    /// Which run of the daemon started it.
    var boot: Int
}

/// The hooks of one simulated daemon process, behind production's `HookRunner`: its runs happen
/// on one thread of the process, run under the baton like the workers (one run after another,
/// as the daemon's serial queue has them), and each command "runs" here — the world hears it
/// start (`ran`), it takes a seam call's time (the daemon may die meanwhile; the command, in a
/// process group of its own, still ran), and it exits 0, exits 1 or times out as the schedule draws.
final class SimHookHost: HookHost, @unchecked Sendable {
    // Used by the thread holding the baton only.
    private struct Line: Sendable {
        var jobs: [@Sendable () -> Void] = []
        var closed = false
        var running = false
    }

    private let line: Monitor<Line>
    private let baton: BatonScheduler
    private let choices: ChoiceSource
    private let boot: Int
    /// Hears each command as it starts: the world's hook log and its checks.
    var ran: (SimHookRun) -> Void = { _ in }

    /// `enabled`: the profile has hooks, so the process has a thread for them.
    init(baton: BatonScheduler, choices: ChoiceSource, boot: Int, enabled: Bool) {
        self.baton = baton
        self.choices = choices
        self.boot = boot
        line = Monitor(Line(running: enabled), scheduler: baton)
        guard enabled else { return }
        baton.startThread(named: "hooks") { [line] in
            while let job = line.wait(for: { line -> (@Sendable () -> Void)?? in
                if !line.jobs.isEmpty { return .some(line.jobs.removeFirst()) }
                return line.closed ? .some(nil) : nil
            }) {
                job()
            }
            line.update { $0.running = false }
        }
    }

    func async(_ job: @escaping @Sendable () -> Void) {
        line.update { line in
            guard !line.closed else { return }
            line.jobs.append(job)
        }
    }

    func waitUntilIdle(deadline: DispatchTime) -> Bool { true }

    func launch(_ process: HookProcess, clock: any Clock, started: (pid_t?) -> Void) -> HookProcess.Outcome {
        let environment = Dictionary(process.environment.map { entry -> (String, String) in
            let text = String(decoding: entry, as: UTF8.self)
            let equals = text.firstIndex(of: "=") ?? text.endIndex
            return (String(text[..<equals]), String(text[text.index(after: equals, clampedTo: text.endIndex)...]))
        }, uniquingKeysWith: { _, last in last })
        let hook = process.command == SimConfig.onSentCommand ? "on_sent" : process.command == SimConfig.onFailedCommand ? "on_failed" : process.command
        ran(SimHookRun(hook: hook, id: environment["UPLOADER_ID"] ?? "", file: String(decoding: process.arguments[0], as: UTF8.self),
                       manifest: String(decoding: process.arguments[1], as: UTF8.self), boot: boot))
        started(4242)
        defer { started(nil) }
        baton.yield()
        switch choices.pick([80, 12, 8]) {
        case 0: return .exited(0)
        case 1: return .exited(1)
        default: return .timedOut
        }
    }

    /// The process has ended (crashed or stopped): the runs not started stay due on the disk, for
    /// the next start; the one running goes to its end (on a dead process its writes fail).
    func shutDown() {
        line.update { line in
            line.closed = true
            line.jobs = []
        }
        line.wait { $0.running ? nil : () }
    }
}

private extension String {
    func index(after i: Index, clampedTo end: Index) -> Index { i == end ? end : index(after: i) }
}
