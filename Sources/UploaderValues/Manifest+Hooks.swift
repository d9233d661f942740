import Foundation

/// The manifest's `hooks` list (DESIGN §9): the final-state manifest names the hook due, and
/// each run of it is recorded there — its start before the command is spawned, its end and exit
/// status once it is reaped. A hook is due while the last entry of its name has no end, so a
/// run cut by a crash (a start, no end) runs again, appending an entry, and a finished run
/// never runs again. Pure: the spool and the executor do the writing.
extension Manifest {
    /// One run of a hook, or a hook due that has not started (every time `null`).
    package struct HookRun: Decodable, Sendable, Equatable {
        package var name: String
        package var startedAt: String?
        package var endedAt: String?
        /// The exit status; for a hook that did not exit by itself, the shell's numbers:
        /// 128 + the signal that killed it, 124 when it was killed at `hook_timeout`, 127 when it could not start.
        package var exitStatus: Int?

        package init(name: String, startedAt: String? = nil, endedAt: String? = nil, exitStatus: Int? = nil) {
            self.name = name
            self.startedAt = startedAt
            self.endedAt = endedAt
            self.exitStatus = exitStatus
        }

        enum CodingKeys: String, CodingKey {
            case name, startedAt = "started_at", endedAt = "ended_at", exitStatus = "exit_status"
        }

        var json: JSONObjectWriter {
            var w = JSONObjectWriter()
            w.field("name", name)
            w.field("started_at", startedAt)
            w.field("ended_at", endedAt)
            w.field("exit_status", exitStatus)
            return w
        }
    }

    /// The hook a file reaching this state runs: `on_sent` for sent, `on_failed` for failed.
    package static func hookName(for state: State) -> String? {
        switch state {
        case .sent: return "on_sent"
        case .failed: return "on_failed"
        case .queued, .uploading, .retry: return nil
        }
    }

    /// Names the hook of this (final) state as due; written with the final-state manifest.
    package mutating func markHookDue() {
        guard let name = Manifest.hookName(for: state) else { return }
        hooks = (hooks ?? []) + [HookRun(name: name)]
    }

    /// The hook this manifest has due with no finished run, if any: its state's hook, when the
    /// last entry of that name has no end. A manifest without `hooks` has none due.
    package var dueHook: String? {
        guard let name = Manifest.hookName(for: state), let last = hooks?.last(where: { $0.name == name }),
              last.endedAt == nil else { return nil }
        return name
    }

    /// A run of `name` starts: fills in the entry that named it due, or appends one (a run again).
    package mutating func recordHookStart(_ name: String, at date: Date) {
        var runs = hooks ?? []
        if let index = runs.lastIndex(where: { $0.name == name }), runs[index].startedAt == nil, runs[index].endedAt == nil {
            runs[index].startedAt = Timestamp.format(date)
        } else {
            runs.append(HookRun(name: name, startedAt: Timestamp.format(date)))
        }
        hooks = runs
    }

    /// The run of `name` started last has ended with `exitStatus`.
    package mutating func recordHookEnd(_ name: String, at date: Date, exitStatus: Int) {
        var runs = hooks ?? []
        if let index = runs.lastIndex(where: { $0.name == name }), runs[index].endedAt == nil {
            runs[index].endedAt = Timestamp.format(date)
            runs[index].exitStatus = exitStatus
        } else {
            runs.append(HookRun(name: name, endedAt: Timestamp.format(date), exitStatus: exitStatus))
        }
        hooks = runs
    }
}
