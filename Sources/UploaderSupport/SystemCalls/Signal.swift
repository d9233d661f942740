@preconcurrency import Glibc

/// A signal by name (`.terminate`, not `SIGTERM`): what the daemon blocks and takes from its
/// signalfd (`SignalDescriptor`), ignores or leaves to its default, and sends to a hook's
/// process group (`ChildProcess`), so that none of those callers needs libc for a number.
package struct Signal: RawRepresentable, Hashable, Sendable {
    package let rawValue: Int32
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// SIGHUP: reload.
    package static let hangUp = Signal(rawValue: SIGHUP)
    /// SIGINT: stop (Ctrl-C).
    package static let interrupt = Signal(rawValue: SIGINT)
    /// SIGTERM: stop.
    package static let terminate = Signal(rawValue: SIGTERM)
    /// SIGKILL: cannot be caught or ignored.
    package static let kill = Signal(rawValue: SIGKILL)
    /// SIGPIPE: a write to a pipe or socket nobody reads any more.
    package static let brokenPipe = Signal(rawValue: SIGPIPE)
    /// SIGCHLD: a child changed state.
    package static let childChanged = Signal(rawValue: SIGCHLD)

    /// Blocks `signals` in the calling thread, and so in the threads it starts from now on
    /// (pthread_sigmask with SIG_BLOCK); a blocked signal waits to be taken from a signalfd.
    package static func block(_ signals: [Signal]) {
        var set = Signal.set(signals)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// signal(2) with SIG_IGN: the process no longer hears it (a child inherits that through exec).
    package func ignore() { _ = signal(rawValue, SIG_IGN) }

    /// signal(2) with SIG_DFL: what the kernel does with it by default.
    package func restoreDefault() { _ = signal(rawValue, SIG_DFL) }

    /// The `sigset_t` holding exactly `signals`.
    static func set(_ signals: [Signal]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal.rawValue) }
        return set
    }
}
