@preconcurrency import Glibc
import CSysShims

/// A child process to start with posix_spawn(3), clean whoever starts it: hooks and the test
/// harness alike.
///
/// The daemon blocks SIGTERM/SIGINT/SIGHUP in every thread (it takes them from a signalfd),
/// and a child inherits that mask: it would ignore SIGTERM. So every child gets an empty mask,
/// default dispositions and a process group of its own (POSIX_SPAWN_SETSIGMASK | SETSIGDEF |
/// SETPGROUP), so that a timeout can stop the child and everything it started; and it inherits
/// no descriptor above stderr (the daemon's sockets, locks, files), whatever their flags.
package struct ProcessSpawn: Sendable {
    /// What one of the child's descriptors (0, 1, 2) is made before it starts, in the order given.
    package enum Redirection: Sendable {
        /// open(2) of `path` with `flags` and `mode` (no close-on-exec: the child keeps it).
        case open(path: String, flags: OpenFlags, mode: UInt32)
        /// dup2(2) of one of our descriptors (its number, lent until `spawn` returns).
        case duplicate(Int32)
    }

    /// A path (holding `/`) to run, or a name looked up in PATH.
    package var executable: String
    /// The child's argv, argv[0] first, as raw bytes (file names need not be UTF-8; a NUL, which
    /// no path holds, becomes `?`).
    package var arguments: [[UInt8]]
    /// The child's whole environment, `NAME=value` byte strings.
    package var environment: [[UInt8]]
    /// Where the child starts; nil: our working directory.
    package var workingDirectory: String?
    /// The descriptors set up for the child, each with its own: `(0, .open(path: "/dev/null", …))`.
    package var redirections: [(descriptor: Int32, Redirection)]

    package init(executable: String, arguments: [[UInt8]], environment: [[UInt8]], workingDirectory: String? = nil,
                 redirections: [(descriptor: Int32, Redirection)] = []) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.redirections = redirections
    }

    /// Starts the child (posix_spawn, or posix_spawnp for a name without `/`); what refused it is
    /// thrown (ENOENT for a command not found, EACCES, …).
    package func spawn() throws(Errno) -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (descriptor, redirection) in redirections {
            switch redirection {
            case .open(let path, let flags, let mode):
                posix_spawn_file_actions_addopen(&actions, descriptor, path, flags.rawValue, mode_t(mode))
            case .duplicate(let source):
                posix_spawn_file_actions_adddup2(&actions, source, descriptor)
            }
        }
        _ = uploader_spawn_addclosefrom(&actions, 3)
        if let workingDirectory { _ = uploader_spawn_addchdir(&actions, workingDirectory) }

        let argv = arguments.map(Self.cString) + [nil]
        let envp = environment.map(Self.cString) + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        var child: pid_t = 0
        let rc = executable.contains("/")
            ? posix_spawn(&child, executable, &actions, &attributes, argv, envp)
            : posix_spawnp(&child, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw Errno(rawValue: rc) }
        return ChildProcess(id: child)
    }

    /// A malloc'ed NUL-terminated copy (freed with free()); a NUL byte cannot occur in paths.
    private static func cString(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar>? {
        let pointer = malloc(bytes.count + 1)!.assumingMemoryBound(to: CChar.self)
        for (index, byte) in bytes.enumerated() { pointer[index] = CChar(bitPattern: byte == 0 ? UInt8(ascii: "?") : byte) }
        pointer[bytes.count] = 0
        return pointer
    }
}
