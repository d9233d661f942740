import Foundation
import UploaderSupport
import UploaderConfig

/// One attempt to publish a file on an SFTP or FTP(S) server (DESIGN §14), through any
/// `RemoteFileSession`: bytes go to the temporary name (continuing from what the server holds
/// when the manifest shows an earlier attempt of this very version), their size is checked,
/// then one rename puts them under the final name, so the final name never holds a partial file.
///
/// The manifest's `remote` record (`RemoteFileState`) is kept through `record` before bytes go
/// and as the server confirms them.
struct RemoteFilePublish {
    let target: RemoteFileTarget
    let session: ReachingSession
    let source: UploadSource
    let names: RemoteFileNames
    let controls: RemoteFileControls
    let saved: RemoteFileState?
    let record: (RemoteFileState) -> Void
    let logger: Logger
    let profile: String
    private var bytesSent: Int64 = 0

    init(target: RemoteFileTarget, session: any RemoteFileSession, source: UploadSource, names: RemoteFileNames,
         controls: RemoteFileControls, saved: RemoteFileState?, logger: Logger, profile: String,
         record: @escaping (RemoteFileState) -> Void) {
        self.target = target
        self.session = ReachingSession(session)
        self.source = source
        self.names = names
        self.controls = controls
        self.saved = saved
        self.logger = logger
        self.profile = profile
        self.record = record
    }

    private var size: Int64 { source.size }
    private var fields: [(String, String)] { [("profile", profile), ("file", source.path.logSafe)] }

    /// The record of this version of the file at the temporary name, `bytes` confirmed.
    private func state(_ bytes: Int64) -> RemoteFileState {
        RemoteFileState(scheme: target.scheme.rawValue, remotePath: names.final, tempPath: names.temporary, bytesConfirmed: bytes,
                        fileSize: size, fileMtime: source.status.mtimeText)
    }

    /// Whether `saved` is an earlier attempt of this version of the file to this temporary name.
    private var isEarlierAttempt: Bool {
        guard let saved, saved.abandoned != true else { return false }
        return saved.tempPath == names.temporary && saved.fileSize == size
            && saved.fileMtime == source.status.mtimeText
    }

    mutating func run() -> UploadOutcome {
        if let problem = names.problem { return (.failure(.other(problem)), .permanent(reason: problem)) }
        if isEarlierAttempt, let saved, saved.published {
            // Renamed by an attempt whose end was never recorded (a crash): done if it is there whole.
            switch session.size(of: saved.remotePath, controls) {
            case .failure(let failure): return failed(failure)
            case .success(let held) where held == size: return delivered(saved)
            case .success: break
            }
        }
        var append = false
        var confirmed: Int64 = 0
        var owned = false
        if isEarlierAttempt {
            // The record says an earlier attempt of this very version made the temporary name its
            // own: whatever is there now is its bytes.
            switch session.size(of: names.temporary, controls) {
            case .failure(let failure): return failed(failure)
            case .success(let held?) where held <= size:
                append = held > 0
                confirmed = held
                owned = true
            case .success(let held?):
                logger.log(.info, "temporary file on the server is longer than the file; sending it afresh",
                           pairs: fields + [("remote_path", names.temporary), ("remote_size", String(held))])
            case .success(nil):
                owned = true
            }
        }
        let keepsTemporary = PlantedBug.remoteTemporaryKept.isActive
        if !owned && !keepsTemporary {
            // Another version's bytes may wait under the temporary name (its attempt cut): they go
            // before this version takes the name, or a later resume would append to them.
            switch session.delete(names.temporary, controls) {
            case .success: break
            case .failure(let failure) where failure.kind == .pathRefused: break
            case .failure(let failure): return failed(failure)
            }
        }
        record(state(confirmed))
        if target.exists == .fail, let failure = refuseExisting() { return failure }
        if confirmed < size || size == 0 {
            if append {
                logger.log(.info, "resuming upload from the temporary file's size on the server",
                           pairs: fields + [("remote_path", names.temporary), ("offset", String(confirmed)), ("size", String(size))])
            }
            switch session.upload(source, to: names.temporary, append: append || keepsTemporary, controls) {
            case .failure(let failure):
                bytesSent += failure.bytesSent
                return failed(failure)
            case .success(let sent):
                bytesSent += sent
            }
        }
        // The size the server holds now, not what we think we sent.
        switch session.size(of: names.temporary, controls) {
        case .failure(let failure):
            return failed(failure)
        case .success(let held):
            record(state(held ?? 0))
            guard held == size else {
                let reason = "the server holds \(held.map(String.init) ?? "no") bytes under \(names.temporary) after the upload, "
                    + "the file has \(size); sending the rest again"
                return (.failure(.broken(reason, bytesSent: bytesSent)), .retryLater(reason: reason, retryAfter: nil))
            }
        }
        if let change = source.changeSinceClaim() {
            // Never publish bytes of a version that changed under us; the next attempt starts afresh.
            let reason = "file changed during upload (\(change))"
            return (.failure(.broken(reason, bytesSent: bytesSent)), .retryLater(reason: reason, retryAfter: nil))
        }
        return publish()
    }

    // MARK: The rename

    /// The final name taken before any byte goes: `exists = fail` fails the file at once.
    private func refuseExisting() -> UploadOutcome? {
        switch session.size(of: names.final, controls) {
        case .failure(let failure): return failed(failure)
        case .success(nil): return nil
        case .success: return existsFailure(names.final)
        }
    }

    private func existsFailure(_ path: String) -> UploadOutcome {
        let reason = "\(path) already exists on the server (exists = fail)"
        return (.failure(.other(reason)), .permanent(reason: reason))
    }

    /// Renames the temporary file onto the final name as `exists` says.
    private mutating func publish() -> UploadOutcome {
        switch target.exists {
        case .overwrite:
            if case .ended(let outcome) = firstRename(to: names.final) { return outcome }
            // OpenSSH's SFTP rename refuses an existing target: delete it, then rename. Between the
            // two the final name is briefly absent (never partial).
            switch session.size(of: names.final, controls) {
            case .failure(let failure): return failed(failure)
            case .success(nil): return renameFailedAgain(names.final)
            case .success:
                if case .failure(let failure) = session.delete(names.final, controls) { return failed(failure) }
                return renameFailedAgain(names.final)
            }
        case .fail:
            if case .ended(let outcome) = firstRename(to: names.final) { return outcome }
            if case .success(_?) = session.size(of: names.final, controls) { return existsFailure(names.final) }
            return renameFailedAgain(names.final)
        case .rename:
            // FTP's rename replaces an existing target: each candidate is looked at first.
            for n in 0...99 {
                let candidate = n == 0 ? names.final : names.alternative(n)
                switch session.size(of: candidate, controls) {
                case .failure(let failure): return failed(failure)
                case .success(_?): continue
                case .success(nil):
                    if case .ended(let outcome) = firstRename(to: candidate) { return outcome }
                    if case .success(_?) = session.size(of: candidate, controls) { continue }
                    return renameFailedAgain(candidate)
                }
            }
            let reason = "\(names.final) and its 99 alternatives already exist on the server (exists = rename)"
            return (.failure(.other(reason)), .permanent(reason: reason))
        }
    }

    /// How a first rename onto a name went: the attempt ended (published, or failed in a way no
    /// second look mends: a cut connection, a timeout, our cancellation), or the server refused
    /// the name, as OpenSSH refuses an existing target, which `publish` then looks into.
    private enum FirstRename {
        case ended(UploadOutcome)
        case refused
    }

    private func firstRename(to path: String) -> FirstRename {
        switch session.rename(names.temporary, to: path, controls) {
        case .success: return .ended(published(path))
        case .failure(let failure) where failure.kind == .pathRefused: return .refused
        case .failure(let failure): return .ended(failed(failure))
        }
    }

    /// The rename, once more, its failure the attempt's.
    private func renameFailedAgain(_ path: String) -> UploadOutcome {
        switch session.rename(names.temporary, to: path, controls) {
        case .success: return published(path)
        case .failure(let failure):
            var failure = failure
            failure.message = "rename \(names.temporary) → \(path): \(failure.message)"
            // The bytes wait complete under the temporary name; the next attempt renames them.
            if failure.kind == .pathRefused { failure.kind = .transient }
            return failed(failure)
        }
    }

    private func published(_ path: String) -> UploadOutcome {
        var done = state(size)
        done.remotePath = path
        done.published = true
        record(done)
        return delivered(done)
    }

    private func delivered(_ done: RemoteFileState) -> UploadOutcome {
        let answer = UploadResponse(status: 0, bytesSent: bytesSent, effectiveURL: CurlRemoteFileSession.url(target, done.remotePath))
        return (.success(answer), .sent(answer))
    }

    private func failed(_ failure: RemoteFileFailure) -> UploadOutcome {
        var failure = failure
        failure.bytesSent = bytesSent
        // Cut before its request left, after an earlier one of this attempt reached the server:
        // the attempt connected.
        if failure.kind == .cancelled(connected: false) && session.reached { failure.kind = .cancelled(connected: true) }
        return (.failure(failure.transferFailure), failure.disposition)
    }
}

/// A session that notes whether any operation of the attempt reached the server (an answer, or
/// a failure after connecting), as the attempt's end must say.
final class ReachingSession: RemoteFileSession {
    let inner: any RemoteFileSession
    private(set) var reached = false

    init(_ inner: any RemoteFileSession) { self.inner = inner }

    private func note<T>(_ result: Result<T, RemoteFileFailure>) -> Result<T, RemoteFileFailure> {
        switch result {
        case .success: reached = true
        case .failure(let failure):
            if failure.kind != .unreachable && failure.kind != .cancelled(connected: false) { reached = true }
        }
        return result
    }

    func size(of path: String, _ controls: RemoteFileControls) -> Result<Int64?, RemoteFileFailure> { note(inner.size(of: path, controls)) }

    func upload(_ source: UploadSource, to path: String, append: Bool, _ controls: RemoteFileControls) -> Result<Int64, RemoteFileFailure> {
        note(inner.upload(source, to: path, append: append, controls))
    }

    func rename(_ from: String, to: String, _ controls: RemoteFileControls) -> Result<Void, RemoteFileFailure> {
        note(inner.rename(from, to: to, controls))
    }

    func delete(_ path: String, _ controls: RemoteFileControls) -> Result<Void, RemoteFileFailure> { note(inner.delete(path, controls)) }
}
