@preconcurrency import Glibc
import CSysShims

/// A child we started (`ProcessSpawn`) and have not reaped: its pid, which is its process group
/// too, and a pidfd that polls readable once it has exited. Only the code that spawned it reaps
/// it, so until then its pid cannot be reused while a signal may still name its group.
///
/// A class: the thread that runs a hook and the one that watches it exit share it, and the pidfd
/// closes once both are done with it.
package final class ChildProcess: Sendable {
    /// How a reaped child ended.
    package enum Termination: Hashable, Sendable {
        /// exit(status): the low 8 bits.
        case exited(Int32)
        /// Killed by this signal number.
        case signaled(Int32)
    }

    /// The pid, and the number of the process group it leads.
    package let id: Int32
    /// pidfd_open(2), close-on-exec; nil where there is none (ENOSYS before Linux 5.3, or no
    /// descriptor left): then the exit is waited for (`waitForExit`) rather than polled.
    private let exitDescriptor: FileDescriptor?

    init(id: Int32) {
        self.id = id
        let fd = uploader_pidfd_open(id)
        exitDescriptor = fd >= 0 ? FileDescriptor(adopting: fd) : nil
    }

    /// The pidfd's number, lent to a poll (readable once the child has exited, which leaves it
    /// unreaped); nil without one.
    package var exitPollDescriptor: Int32? {
        switch exitDescriptor {
        case .some(let descriptor): descriptor.rawValue
        case .none: nil
        }
    }

    /// Blocks until the child has exited, leaving it to be reaped (waitid with WNOWAIT), EINTR
    /// retried; what else fails is thrown (nothing does for our own child not reaped yet).
    package func waitForExit() throws(Errno) {
        var info = siginfo_t()
        while waitid(P_PID, id_t(id), &info, WEXITED | WNOWAIT) < 0 {
            let code = Errno.current
            if code != .interrupted { throw code }
        }
    }

    /// Reaps the child, waiting for it to end (waitpid), EINTR retried, and says how it ended.
    package func reap() throws(Errno) -> Termination {
        var status: Int32 = 0
        while true {
            let result = waitpid(id, &status, 0)
            if result == id { break }
            let code = result < 0 ? Errno.current : Errno.invalid
            if code != .interrupted { throw code }
        }
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }

    /// kill(2) of the child's whole process group; false when it is gone (or not ours).
    @discardableResult
    package func signalGroup(_ signal: Signal) -> Bool { kill(-id, signal.rawValue) == 0 }
}
