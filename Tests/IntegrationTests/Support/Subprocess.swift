@preconcurrency import Glibc
import Foundation
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// How a finished process ended and what it wrote.
struct ProcessResult: Sendable, CustomStringConvertible {
    /// The exit status, or 128 + the signal number when it was killed by a signal.
    let exitCode: Int32
    /// The signal that killed it, if one did.
    let signal: Int32?
    let stdout: String
    let stderr: String
    let command: [String]

    var description: String {
        let how = signal.map { "killed by signal \($0)" } ?? "exit \(exitCode)"
        return "\(command.joined(separator: " ")): \(how)\nstdout: \(stdout)\nstderr: \(stderr)"
    }
}

/// Starts and runs child processes; output goes to files, never pipes, so a chatty
/// child can never block on a full pipe. See `RunningProcess` for how they are spawned.
enum ProcessRunner {
    /// The absolute path of `name` (searched on PATH, then the sbin directories);
    /// a name holding a slash is returned as is.
    static func which(_ name: String) -> String? {
        if name.contains("/") { return name }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let dirs = path.split(separator: ":").map(String.init) + ["/usr/local/sbin", "/usr/sbin", "/sbin"]
        for dir in dirs where !dir.isEmpty {
            let candidate = dir + "/" + name
            var st = stat()
            if stat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 {
                return candidate
            }
        }
        return nil
    }

    /// Runs a command to completion. On timeout the child is killed (SIGKILL) and an
    /// error holding its output so far is thrown.
    static func run(
        _ command: [String],
        environment: [String: String] = [:],
        inheritEnvironment: Bool = true,
        stdin: Data? = nil,
        currentDirectory: String? = nil,
        timeout: TimeInterval = 60
    ) throws -> ProcessResult {
        let scratch = try TempDir(prefix: "upl-run")
        let process = try start(
            command, environment: environment, inheritEnvironment: inheritEnvironment,
            stdin: stdin, currentDirectory: currentDirectory, outputDirectory: scratch.path)
        return try withExtendedLifetime(scratch) { try process.waitForExit(timeout: timeout) }
    }

    /// Starts a command in the background. Its stdout and stderr go to files in
    /// `outputDirectory` (a private temporary directory when nil).
    static func start(
        _ command: [String],
        environment: [String: String] = [:],
        inheritEnvironment: Bool = true,
        stdin: Data? = nil,
        currentDirectory: String? = nil,
        outputDirectory: String? = nil
    ) throws -> RunningProcess {
        try RunningProcess(
            command, environment: environment, inheritEnvironment: inheritEnvironment,
            stdin: stdin, currentDirectory: currentDirectory, outputDirectory: outputDirectory)
    }
}

private let outputCounter = NSLock()
nonisolated(unsafe) private var outputSerial = 0

private func nextOutputSerial() -> Int {
    outputCounter.lock()
    defer { outputCounter.unlock() }
    outputSerial += 1
    return outputSerial
}

/// A child process started by the harness, spawned with posix_spawn in a process
/// group of its own, with an empty signal mask and default signal dispositions
/// (Foundation's `Process` passes on the blocked mask of the calling Dispatch thread,
/// so a child could not be stopped by SIGTERM). Killed (SIGKILL, with its process
/// group) when it goes away still running.
final class RunningProcess: @unchecked Sendable {
    let pid: Int32
    let command: [String]
    /// Files that receive the child's stdout and stderr.
    let stdoutPath: String
    let stderrPath: String

    private let exit = ExitBox()
    private let ownedDirectory: TempDir?

    init(
        _ command: [String],
        environment: [String: String] = [:],
        inheritEnvironment: Bool = true,
        stdin: Data? = nil,
        currentDirectory: String? = nil,
        outputDirectory: String? = nil
    ) throws {
        guard let name = command.first else { throw HarnessError("cannot start an empty command") }
        guard let executable = ProcessRunner.which(name) else {
            throw HarnessError("command not found: \(name) (PATH=\(ProcessInfo.processInfo.environment["PATH"] ?? ""))")
        }
        let directory: String
        if let outputDirectory {
            directory = outputDirectory
            ownedDirectory = nil
        } else {
            let owned = try TempDir(prefix: "upl-proc")
            directory = owned.path
            ownedDirectory = owned
        }
        let base = "\(directory)/\((name as NSString).lastPathComponent)-\(nextOutputSerial())"
        stdoutPath = base + ".stdout"
        stderrPath = base + ".stderr"
        self.command = command
        var stdinPath = "/dev/null"
        if let stdin {
            stdinPath = base + ".stdin"
            try stdin.write(to: URL(fileURLWithPath: stdinPath))
        }
        let env = inheritEnvironment
            ? ProcessInfo.processInfo.environment.merging(environment) { $1 } : environment

        let append: OpenFlags = [.writeOnly, .create, .truncate, .append]
        let spawn = ProcessSpawn(
            executable: executable, arguments: command.map { Array($0.utf8) },
            environment: env.map { Array("\($0.key)=\($0.value)".utf8) }, workingDirectory: currentDirectory,
            redirections: [(0, .open(path: stdinPath, flags: .readOnly, mode: 0)),
                           (1, .open(path: stdoutPath, flags: append, mode: 0o644)),
                           (2, .open(path: stderrPath, flags: append, mode: 0o644))])
        // An empty signal mask, default handlers, a process group of its own (see ProcessSpawn).
        let child: Int32
        do {
            child = try spawn.spawn().id
        } catch {
            throw HarnessError("cannot start \(command.joined(separator: " ")): \(error.description)")
        }
        pid = child

        // One thread per child reaps exactly that child. It holds only the box, so
        // `deinit` still runs (and kills the child) when the object is dropped.
        let spawned = child
        let box = exit
        box.group.enter()
        let reaper = Thread {
            var status: Int32 = 0
            while waitpid(spawned, &status, 0) < 0 && errno == EINTR {}
            box.finish(status)
        }
        reaper.name = "reaper-\(spawned)"
        reaper.start()
    }

    deinit {
        if isRunning {
            _ = Glibc.kill(-pid, SIGKILL)
            _ = Glibc.kill(pid, SIGKILL)
            _ = exit.group.wait(timeout: .now() + 5)
        }
    }

    var isRunning: Bool { exit.group.wait(timeout: .now()) == .timedOut }

    /// Sends `signal` to the child (not to its process group; ignored once it has exited).
    func send(_ signal: Int32) {
        if isRunning { _ = Glibc.kill(pid, signal) }
    }

    /// SIGSTOP, returned once every thread of the child is stopped (`/proc/PID/task/*/stat` say `T`).
    func pause() throws {
        send(SIGSTOP)
        try waitUntil(timeout: 10, "process \(pid) to stop") {
            let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
            return try tasks.allSatisfy { task in
                let stat = try String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8)
                // The state follows the command name, which is in parentheses and may hold spaces.
                return stat[stat.range(of: ")", options: .backwards)!.upperBound...].dropFirst().first == "T"
            }
        }
    }

    /// SIGTERM.
    func terminate() { send(SIGTERM) }

    /// SIGINT.
    func interrupt() { send(SIGINT) }

    /// SIGKILL.
    func kill9() { send(SIGKILL) }

    /// Waits for the child to exit; throws (leaving it running) after `timeout` seconds.
    @discardableResult
    func waitForExit(timeout: TimeInterval = 30) throws -> ProcessResult {
        if exit.group.wait(timeout: .now() + timeout) == .timedOut {
            throw HarnessError(
                "\(command.joined(separator: " ")) (pid \(pid)) still running after \(timeout)s; "
                    + "stderr so far: \(stderrText())")
        }
        let status = exit.status
        let signal = status & 0x7f
        let signaled = signal != 0 && signal != 0x7f
        return ProcessResult(
            exitCode: signaled ? 128 + signal : (status >> 8) & 0xff,
            signal: signaled ? signal : nil,
            stdout: stdoutText(), stderr: stderrText(), command: command)
    }

    /// SIGTERM, then SIGKILL if it has not exited within `grace` seconds; waits for the
    /// end, then SIGKILLs whatever is left of its process group (helpers, workers).
    @discardableResult
    func stop(grace: TimeInterval = 5) -> ProcessResult? {
        let wasRunning = isRunning
        terminate()
        var result = try? waitForExit(timeout: grace)
        if result == nil {
            kill9()
            result = try? waitForExit(timeout: 10)
        }
        if wasRunning { _ = Glibc.kill(-pid, SIGKILL) }
        return result
    }

    /// Everything the child wrote to stdout so far.
    func stdoutText() -> String { Self.read(stdoutPath) }

    /// Everything the child wrote to stderr so far.
    func stderrText() -> String { Self.read(stderrPath) }

    private static func read(_ path: String) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// The wait status of a child, filled in once by its reaper thread.
private final class ExitBox: @unchecked Sendable {
    let group = DispatchGroup()
    private let lock = NSLock()
    private var raw: Int32 = 0

    var status: Int32 {
        lock.lock()
        defer { lock.unlock() }
        return raw
    }

    func finish(_ status: Int32) {
        lock.lock()
        raw = status
        lock.unlock()
        group.leave()
    }
}
