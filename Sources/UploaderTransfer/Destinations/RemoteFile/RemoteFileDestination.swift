import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig

/// SFTP and FTP(S) (DESIGN §14): `RemoteFilePublish` over a session lent from a small pool, so
/// a worker's next file reuses the SSH or FTP connection the last one opened. The `Transport`
/// the runner passes is HTTP's and goes unused.
package final class RemoteFileDestination: UploadDestination {
    let profile: Profile
    let target: RemoteFileTarget
    let logger: Logger
    private let makeSession: @Sendable () -> any RemoteFileSession & Sendable
    /// Sessions not in use, their connections open.
    private let idle = Mutex<[any RemoteFileSession & Sendable]>([])

    package init(profile: Profile, target: RemoteFileTarget, logger: Logger,
                 session: (@Sendable () -> any RemoteFileSession & Sendable)? = nil) {
        self.profile = profile
        self.target = target
        self.logger = logger
        makeSession = session ?? { CurlRemoteFileSession(target: target) }
    }

    package func send(_ upload: DestinationUpload, over transport: any Transport) -> UploadOutcome {
        let session = idle.withLock { $0.popLast() } ?? makeSession()
        var publish = RemoteFilePublish(
            target: target, session: session, source: upload.source, names: RemoteFileNames(target: target, values: upload.values),
            controls: RemoteFileControls(upload.request), saved: upload.resume.saved.remote?.remoteFile, logger: logger,
            profile: profile.name) { [target] state in
                upload.resume.keep(target.scheme.rawValue) { $0.keepRemoteFile(state, url: CurlRemoteFileSession.url(target, state.remotePath)) }
            }
        let outcome = publish.run()
        // A session whose connection broke opens a new one on its next request.
        idle.withLock { $0.append(session) }
        return outcome
    }
}

extension Manifest {
    /// Keeps an SFTP or FTP(S) upload's record in `remote`.
    mutating func keepRemoteFile(_ state: RemoteFileState, url: String) {
        if remote == nil { remote = Remote(url: url) }
        remote?.url = url
        remote?.remoteFile = state
    }
}
