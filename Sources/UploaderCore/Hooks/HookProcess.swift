import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// One hook command run to completion: spawned without a shell in a process group of its own,
/// with a clean signal mask, and killed (with its whole group) when it outlives its timeout.
///
/// `posix_spawn`, not Foundation's `Process`: the daemon blocks SIGTERM/SIGINT/SIGHUP in every
/// thread and a child inherits that mask, so it could not be stopped; here the child starts
/// with an empty mask and default dispositions (POSIX_SPAWN_SETSIGMASK | SETSIGDEF | SETPGROUP).
package struct HookProcess: Sendable {
    /// How a hook ended.
    package enum Outcome: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)
        case timedOut
        case cannotStart(String)

        /// As the manifest records it: the exit status, or the shell's numbers for the rest
        /// (128 + signal, 124 for a timeout as timeout(1) says it, 127 for a command that cannot start).
        package var exitStatus: Int {
            switch self {
            case .exited(let code): return Int(code)
            case .signaled(let signal): return 128 + Int(signal)
            case .timedOut: return 124
            case .cannotStart: return 127
            }
        }

        package var description: String {
            switch self {
            case .exited(let code): return "exit \(code)"
            case .signaled(let signal): return "killed by signal \(signal)"
            case .timedOut: return "timed out; killed"
            case .cannotStart(let reason): return "cannot start: \(reason)"
            }
        }
    }

    /// The command: a path (holding `/`) or a name looked up in PATH.
    package var command: String
    /// Arguments after the command itself, as raw bytes (file names need not be UTF-8).
    package var arguments: [[UInt8]]
    /// The whole environment of the child, `NAME=value` byte strings.
    package var environment: [[UInt8]]
    package var workingDirectory: String
    /// How long it may run, in seconds, before it is stopped.
    package var timeout: Double
    /// Where the hook's stdout and stderr are kept for the log line about its run; nil lets them
    /// go to the daemon's stderr.
    package var output: HookOutput? = nil

    /// Runs the hook and waits for it (at most `timeout` on `clock`, plus one second for SIGTERM
    /// to work). `started` gets the child's pid (also its process group) while it runs, nil once reaped.
    ///
    /// The thread reading the hook's output also sees it exit (its pidfd polls readable; the child
    /// stays a zombie, so its pid cannot be reused while a kill may still name its group) and opens
    /// a latch; without an output pipe or a pidfd a thread of its own waits for the exit (`waitid`
    /// with `WNOWAIT`). This thread waits on the clock for that latch, then reaps.
    package func run(clock: any Clock, started: (Int32?) -> Void = { _ in }) -> Outcome {
        let pipe = output.flatMap(Self.outputPipe(into:))
        let child: ChildProcess
        do {
            child = try spawn(output: pipe?.writeEnd)
        } catch {
            pipe?.abandon()
            return .cannotStart(error.description)
        }
        let exited = Latch()
        let pid = child.id
        let exitSeenByReader = pipe != nil && child.exitPollDescriptor != nil
        // One thread reads the output and sees the exit (without a pidfd it only reads).
        pipe?.started(named: "hook-\(pid)", exit: exitSeenByReader ? (child, exited) : nil)
        started(pid)
        defer {
            started(nil)
            pipe?.finish()
        }
        if !exitSeenByReader {
            SystemScheduler.system.startThread(named: "hook-wait-\(pid)") {
                Self.waitForExit(child)
                exited.open()
            }
        }
        if clock.wait(for: exited, until: clock.monotonic + timeout) { return reap(child) }
        child.signalGroup(.terminate)
        if clock.wait(for: exited, until: clock.monotonic + 1) {
            _ = reap(child)
            child.signalGroup(.kill)
            return .timedOut
        }
        child.signalGroup(.kill)
        exited.wait()
        _ = reap(child)
        return .timedOut
    }

    /// Blocks until `child` has ended, leaving it to be reaped.
    static func waitForExit(_ child: ChildProcess) {
        do {
            try child.waitForExit()
        } catch {
            // Nothing fails to wait for our own child not reaped yet; should it, the reap that
            // follows says so (a bug: its precondition).
        }
    }

    /// The pipe for the hook's output; nil when none can be made, and then the hook writes to the
    /// daemon's stderr, as it does with no `output`.
    private static func outputPipe(into output: HookOutput) -> HookOutputPipe? {
        do {
            return try HookOutputPipe.open(into: output)
        } catch {
            return nil
        }
    }

    /// `output`: the pipe for the child's stdout and stderr; nil sends both to the daemon's stderr.
    private func spawn(output: Int32?) throws(Errno) -> ChildProcess {
        var redirections: [(descriptor: Int32, ProcessSpawn.Redirection)] = [(0, .open(path: "/dev/null", flags: .readOnly, mode: 0))]
        if let output {
            redirections += [(1, .duplicate(output)), (2, .duplicate(output))]
        } else {
            // Hook output joins the daemon's log stream (stderr, the journal under systemd).
            redirections.append((1, .duplicate(2)))
        }
        return try ProcessSpawn(executable: command, arguments: [Array(command.utf8)] + arguments, environment: environment,
                                workingDirectory: workingDirectory, redirections: redirections).spawn()
    }

    /// Reaps `child`, which has ended (the latch said so), and says how.
    private func reap(_ child: ChildProcess) -> Outcome {
        // Our own child, not reaped yet: nothing else in the process waits for it (SIGCHLD has its
        // default, `Signals.blockHandled`), so a failure here is a bug.
        let termination: ChildProcess.Termination
        do {
            termination = try child.reap()
        } catch {
            preconditionFailure("waitpid of hook \(child.id): \(SystemError("waitpid", code: error).reasonWithCode)")
        }
        switch termination {
        case .exited(let code): return .exited(code)
        case .signaled(let signal): return .signaled(signal)
        }
    }
}
