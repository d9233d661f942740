@preconcurrency import Glibc
import CSysShims
import Foundation
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
    package var timeout: TimeInterval
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
    package func run(clock: any Clock, started: (pid_t?) -> Void = { _ in }) -> Outcome {
        let pid: pid_t
        let pipe = output.flatMap(HookOutputPipe.init(into:))
        switch spawn(output: pipe?.writeEnd) {
        case .failure(let reason):
            pipe?.abandon()
            return .cannotStart(reason.message)
        case .success(let child): pid = child
        }
        let exited = Latch()
        let pidfd = uploader_pidfd_open(pid)
        if let pipe {
            // One thread reads the output and sees the exit (without a pidfd it only reads).
            pipe.started(named: "hook-\(pid)", exit: pidfd >= 0 ? (pid, pidfd, exited) : nil)
        } else if pidfd >= 0 {
            close(pidfd)
        }
        started(pid)
        defer {
            started(nil)
            pipe?.finish()
        }
        if pipe == nil || pidfd < 0 {
            SystemScheduler.system.startThread(named: "hook-wait-\(pid)") {
                Self.waitForExit(pid)
                exited.open()
            }
        }
        if clock.wait(for: exited, until: clock.monotonic + timeout) { return reap(pid) }
        _ = kill(-pid, SIGTERM)
        if clock.wait(for: exited, until: clock.monotonic + 1) {
            _ = reap(pid)
            _ = kill(-pid, SIGKILL)
            return .timedOut
        }
        _ = kill(-pid, SIGKILL)
        exited.wait()
        _ = reap(pid)
        return .timedOut
    }

    /// Blocks until `pid` has ended, leaving it to be reaped.
    static func waitForExit(_ pid: pid_t) {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && Errno.current == .interrupted {}
    }

    private struct SpawnError: Error { let message: String }

    /// `output`: the pipe for the child's stdout and stderr; nil sends both to the daemon's stderr.
    private func spawn(output: Int32?) -> Result<pid_t, SpawnError> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let output {
            posix_spawn_file_actions_adddup2(&actions, output, 1)
            posix_spawn_file_actions_adddup2(&actions, output, 2)
        } else {
            // Hook output joins the daemon's log stream (stderr, the journal under systemd).
            posix_spawn_file_actions_adddup2(&actions, 2, 1)
        }
        CleanSpawn.closeInheritedDescriptors(&actions)
        CleanSpawn.addChdir(&actions, workingDirectory)

        let argv = ([Array(command.utf8)] + arguments).map(Self.cString) + [nil]
        let envp = environment.map(Self.cString) + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let rc = CleanSpawn.withAttributes { attributes in
            command.contains("/")
                ? posix_spawn(&child, command, &actions, attributes, argv, envp)
                : posix_spawnp(&child, command, &actions, attributes, argv, envp)
        }
        guard rc == 0 else { return .failure(SpawnError(message: Errno(rawValue: rc).description)) }
        return .success(child)
    }

    /// Reaps `pid`, which has ended (`waitForExit` said so), and says how.
    private func reap(_ pid: pid_t) -> Outcome {
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, 0) } while result < 0 && Errno.current == .interrupted
        // Our own child, not reaped yet: nothing else in the process waits for it (SIGCHLD has its
        // default, `Signals.blockHandled`), so a failure here is a bug.
        precondition(result == pid, "waitpid of hook \(pid): \(SystemError("waitpid").reasonWithCode)")
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }

    /// A malloc'ed NUL-terminated copy (freed with free()); a NUL byte cannot occur in paths.
    private static func cString(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar>? {
        let pointer = malloc(bytes.count + 1)!.assumingMemoryBound(to: CChar.self)
        for (index, byte) in bytes.enumerated() { pointer[index] = CChar(bitPattern: byte == 0 ? UInt8(ascii: "?") : byte) }
        pointer[bytes.count] = 0
        return pointer
    }
}
