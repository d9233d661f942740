@preconcurrency import Glibc
import CSysShims

/// What every child process we start needs, hooks and test helpers alike.
///
/// The daemon blocks SIGTERM/SIGINT/SIGHUP in every thread (it takes them with
/// sigtimedwait), and a child inherits that mask: it would ignore SIGTERM. So children
/// get an empty mask, default handlers, and a process group of their own, so that a
/// timeout can stop the child and everything it started.
package enum CleanSpawn {
    /// Calls `body` with initialised attributes (destroyed afterwards).
    package static func withAttributes<R>(_ body: (UnsafeMutablePointer<posix_spawnattr_t>) throws -> R) rethrows -> R {
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
        return try body(&attributes)
    }

    /// The child starts in `directory`.
    package static func addChdir(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ directory: String) {
        _ = uploader_spawn_addchdir(actions, directory)
    }

    /// The child inherits no descriptor above stderr (the daemon's sockets, locks, files).
    package static func closeInheritedDescriptors(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>) {
        _ = uploader_spawn_addclosefrom(actions, 3)
    }
}
