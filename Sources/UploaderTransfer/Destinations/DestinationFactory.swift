import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig

/// The one place a profile's destination protocol is chosen, when its runner is built: from
/// `Profile.destination` and `Profile.uploadProtocol`. A new protocol is a folder beside
/// `HTTP/`, `S3/` and `Tus/`, a case here, and its keys in the config builder.
package enum DestinationFactory {
    package static func make(for profile: Profile, logger: Logger, clock: any Clock, memory: DestinationMemory,
                             threads: DestinationThreads = DestinationThreads()) -> any UploadDestination {
        if case .http(let url) = profile.destination, let added = added.withLock({ $0[url.description] }) { return added(profile) }
        switch profile.destination {
        case .s3(let target):
            return S3Destination(S3Uploader(profile: profile, target: target, logger: logger, clock: clock, threads: threads))
        case .http where profile.uploadProtocol == .tus:
            return TusDestination(TusUploader(profile: profile, logger: logger, clock: clock))
        case .remoteFile(let target):
            return RemoteFileDestination(profile: profile, target: target, logger: logger, session: threads.remoteFileSession)
        case .http:
            return HTTPDestination(profile: profile, known: memory.collections, clock: clock)
        }
    }

    /// Conformances made outside this folder, by the `url` (as written) of the profiles they
    /// serve: asked before the protocols above. A test's fake protocol goes in here.
    private static let added = Mutex<[String: @Sendable (Profile) -> any UploadDestination]>([:])

    /// Serves every profile whose destination is written `url` with what `make` returns.
    package static func add(url: String, _ make: @escaping @Sendable (Profile) -> any UploadDestination) {
        added.withLock { $0[url] = make }
    }

    /// Undoes `add`.
    package static func remove(url: String) {
        _ = added.withLock { $0.removeValue(forKey: url) }
    }
}
