import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig

/// SFTP and FTP(S) (DESIGN §14): `RemoteFilePublish` over a libcurl session lent from a small
/// pool, so a worker's next file reuses the SSH or FTP connection the last one opened (the
/// `Transport` the runner passes is HTTP's and goes unused); or over the session `session`
/// makes on that transport (the simulator's).
package final class RemoteFileDestination: UploadDestination {
    let profile: Profile
    let target: RemoteFileTarget
    let logger: Logger
    private let makeSession: (@Sendable (any Transport) -> any RemoteFileSession)?
    /// libcurl sessions not in use, their connections open.
    private let idle = Mutex<[CurlRemoteFileSession]>([])

    package init(profile: Profile, target: RemoteFileTarget, logger: Logger, session: (@Sendable (any Transport) -> any RemoteFileSession)? = nil) {
        self.profile = profile
        self.target = target
        self.logger = logger
        makeSession = session
    }

    package func send(_ upload: DestinationUpload, over transport: any Transport) -> UploadOutcome {
        if let makeSession { return send(upload, on: makeSession(transport)) }
        let session = idle.withLock { $0.popLast() } ?? CurlRemoteFileSession(target: target)
        let outcome = send(upload, on: session)
        // A session whose connection broke opens a new one on its next request.
        idle.withLock { $0.append(session) }
        return outcome
    }

    private func send(_ upload: DestinationUpload, on session: any RemoteFileSession) -> UploadOutcome {
        var controls = RemoteFileControls(upload.request)
        controls.uploadID = upload.source.id
        var publish = RemoteFilePublish(
            target: target, session: session, source: upload.source, names: RemoteFileNames(target: target, values: upload.values),
            controls: controls, saved: upload.resume.saved.remote?.remoteFile, logger: logger,
            profile: profile.name) { [target] state in
                upload.resume.keep(target.scheme.rawValue) { $0.keepRemoteFile(state, url: CurlRemoteFileSession.url(target, state.remotePath)) }
            }
        return publish.run()
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
