import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// Where the spool's records meet the transfer layer's values. The transfer layer never sees a
/// `ClaimedFile`; the runner hands it an `UploadSource` and writes the manifest edits a
/// destination makes of its progress (`ResumeRecord`).
extension ClaimedFile {
    /// This file as the transfer layer sends it: the claimed descriptor and the manifest's facts.
    var uploadSource: UploadSource {
        var source = UploadSource(fd: fd, status: status, path: path, id: manifest.id, sha256: manifest.sha256,
                                  contentType: manifest.contentType) { [fs] fd, path in try fs.status(fd: fd, path: path) }
        source.read = { [fs] fd, buffer, offset, path in try fs.read(fd: fd, into: buffer, at: offset, path: path) }
        return source
    }

    /// Applies `edit` (the upload's progress) to the manifest and writes it durably; a failure
    /// only costs resumability.
    func recordProgress(in spool: Spool, logger: Logger, profile: String, what: String, _ edit: (inout Manifest) -> Void) {
        edit(&manifest)
        do {
            try spool.writeManifest(manifest, for: path, in: .outbox)
        } catch {
            logger.warn("cannot record \(what) upload progress in the manifest; a restart would send its bytes again",
                        ["profile": profile, "file": path.logSafe, "error": "\(error)"])
        }
    }
}
