import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore

/// The signals the daemon handles synchronously (blocked in every thread, read from a signalfd by
/// the `ServiceLoop`).
package enum Signals {
    package static let handled: [Signal] = [.terminate, .interrupt, .hangUp]

    /// Blocks the handled signals in the calling thread (and the threads it creates later), ignores
    /// SIGPIPE, and gives SIGCHLD its default: a parent that ignored it passes that on through
    /// exec, and then the kernel reaps hooks itself and their exit status is lost.
    package static func blockHandled() {
        Signal.block(handled)
        Signal.brokenPipe.ignore()
        Signal.childChanged.restoreDefault()
    }
}
