@preconcurrency import Glibc
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore

/// The signals the daemon handles synchronously (blocked in every thread, taken with sigtimedwait).
package enum Signals {
    package static let handled: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    /// Blocks the handled signals in the calling thread (and the threads it creates later), ignores
    /// SIGPIPE, and gives SIGCHLD its default: a parent that ignored it passes that on through
    /// exec, and then the kernel reaps hooks itself and their exit status is lost.
    package static func blockHandled() {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in handled { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
        signal(SIGPIPE, SIG_IGN)
        signal(SIGCHLD, SIG_DFL)
    }

    /// Waits up to `seconds` for a handled signal; returns it, or nil on timeout.
    package static func wait(seconds: Double) -> Int32? {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in handled { sigaddset(&set, signal) }
        var timeout = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        let received = sigtimedwait(&set, nil, &timeout)
        return received > 0 ? received : nil
    }
}
