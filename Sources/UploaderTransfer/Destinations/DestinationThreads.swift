import Foundation
import UploaderSupport

/// Where a destination runs threads of its own beside the worker's (S3's part threads) and
/// the transport each of them sends on: the runner's seams, so a test's transport or a
/// deterministic scheduler reaches every request an upload makes, not only the worker's.
package struct DestinationThreads: Sendable {
    /// Starts the threads and makes the wake-ups they wait on.
    package var scheduler: any Scheduler
    /// One transport per thread, made on that thread.
    package var makeTransport: @Sendable () -> any Transport
    /// SFTP and FTP(S): the session one attempt runs on, over the worker's transport; nil for
    /// libcurl's own sessions (`CurlRemoteFileSession`, kept open between files). The simulator's
    /// server model comes in here.
    package var remoteFileSession: (@Sendable (any Transport) -> any RemoteFileSession)?

    package init(scheduler: any Scheduler = .system, makeTransport: @escaping @Sendable () -> any Transport = { CurlTransport() },
                 remoteFileSession: (@Sendable (any Transport) -> any RemoteFileSession)? = nil) {
        self.scheduler = scheduler
        self.makeTransport = makeTransport
        self.remoteFileSession = remoteFileSession
    }
}
