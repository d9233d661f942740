import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// What the runner keeps for each file between its jobs: the claimed file (open descriptor
/// and manifest), the flag that cancels its claim or upload, and what its last request did.
final class HeldFile: @unchecked Sendable {
    // One job at a time uses a held file (see `ClaimedFile`); the owner orders the jobs.
    let cancellation = CancellationFlag()
    var claimed: ClaimedFile?
    /// For a file that could not be read: the manifest to file away as failed.
    var unreadable: Manifest?
    var facts = Manifest.AttemptFacts(bytesSent: 0, httpStatus: nil)
    /// The attempt record the claim wrote aside, until the upload puts it in place (or it is discarded).
    var preparedRecord: Spool.PreparedManifest?

    var manifest: Manifest? { claimed?.manifest ?? unreadable }
}

/// The held files of one profile, by outbox path.
final class HeldFiles: Sendable {
    // Guards only the dictionary; each `HeldFile` is used by one job at a time.
    private let files = Mutex<[RelativePath: HeldFile]>([:])

    func hold(_ path: RelativePath) -> HeldFile {
        let file = HeldFile()
        files.withLock { $0[path] = file }
        return file
    }

    func get(_ path: RelativePath) -> HeldFile? { files.withLock { $0[path] } }

    /// Forgets the file; its descriptor closes when the last reference goes.
    @discardableResult
    func release(_ path: RelativePath) -> HeldFile? { files.withLock { $0.removeValue(forKey: path) } }

    func cancel(_ paths: [RelativePath]) {
        let held = files.withLock { dict in paths.compactMap { dict[$0] } }
        for file in held { file.cancellation.cancel() }
    }
}
