import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// The upload job: record the attempt, send the file, report what came of it.
extension ProfileExecutor {
    /// At the end of a claim ahead: the record of the file's next attempt, written and fsynced
    /// aside, so that when the slot's last record has been rewritten (`FileStages.openRecords`)
    /// the upload only renames it into place — its fsync is off the slot's path. Should it fail,
    /// the upload writes the record itself (and reports what stops it).
    func prepareAttempt(_ held: HeldFile) {
        guard let file = held.claimed else { return }
        // A hint, as said above: without it the upload writes the record itself, and reports what stops it.
        held.preparedRecord = try? lifecycle.prepareAttempt(file, now: clock.now)
    }

    /// `prepareAttempt` of a batch of claims ahead, their records fsynced together.
    func prepareAttempts(_ held: [HeldFile]) {
        let claimed = held.filter { $0.claimed != nil }
        guard claimed.count > 1 else { return claimed.forEach(prepareAttempt) }
        let prepared = lifecycle.prepareAttempts(claimed.map { $0.claimed! }, now: clock.now)
        for (file, record) in zip(claimed, prepared) { file.preparedRecord = try? record.get() }
    }

    /// `record`: whether the record written aside may stand for the attempt (the core's choice:
    /// it knows how long the file waited for its slot); a stale one is discarded.
    func upload(_ path: RelativePath, record: AttemptRecord, transport: any Transport) -> AttemptReport {
        guard let held = heldFile(path), let file = held.claimed else {
            preconditionFailure("upload for a file not claimed: \(path.logSafe)")
        }
        let size = file.status.size
        var prepared = held.preparedRecord
        held.preparedRecord = nil
        if let stale = prepared, record == .fresh {
            spool.discard(stale)
            prepared = nil
        }
        if let change = outdatedClaim(file) {
            logger.debug("claimed file changed while it waited for a slot; claiming it afresh",
                         ["profile": profile.name, "file": path.logSafe, "change": change])
            if let prepared { spool.discard(prepared) }
            return AttemptReport(outcome: .claimOutdated, countedAttempts: file.manifest.countedAttempts, size: size, id: file.manifest.id)
        }
        // The transfer slot is already ours: only now is the attempt written down (step 1 of FileLifecycle).
        do {
            if let prepared {
                try lifecycle.commitAttempt(prepared, of: file)
            } else {
                try lifecycle.beginAttempt(file, now: clock.now)
            }
        } catch {
            return AttemptReport(outcome: .manifestUnwritable(reason: "\(error)"), countedAttempts: file.manifest.countedAttempts,
                                 size: size, id: file.manifest.id)
        }
        let values = TemplateValues(path: file.path, id: file.manifest.id, sha256: file.manifest.sha256 ?? "",
                                    size: size, date: clock.now, profile: profile.name, hostname: hostname)
        var request: UploadRequest
        do {
            request = try builder.request(for: file.uploadSource, values: values, rateLimiter: rateLimiter,
                                          cancellation: held.cancellation)
        } catch {
            // No request was made, so this is no attempt (§1): the reason goes to last_error only.
            return AttemptReport(outcome: .notAttempted(reason: "\(error)"), countedAttempts: file.manifest.countedAttempts,
                                 size: size, id: file.manifest.id)
        }
        let started = clock.monotonic
        let tracker = inFlight.begin(path, size: size, started: clock.now, now: started)
        defer { inFlight.end(path) }
        let log = ProgressLog(file: file.path, size: size, profile: profile.name, logger: logger, clock: clock).callback
        request.progress = { [clock] sent in
            log(sent)
            tracker.progress(sent, now: clock.monotonic)
        }
        let resume = ResumeRecord(saved: file.manifest) { [spool, logger, profile] what, edit in
            file.recordProgress(in: spool, logger: logger, profile: profile.name, what: what, edit)
        }
        let sent = destination.send(DestinationUpload(source: file.uploadSource, values: values, request: request, resume: resume),
                                    over: transport)
        // Answers can echo credentials back; none may reach the manifest or the log.
        let result = SecretRedactor(secrets: profile.secretValues).redact(sent.result)
        let seconds = clock.monotonic - started
        let disposition = sent.disposition
        let response: UploadResponse? = if case .success(let answer) = result { answer } else { nil }
        // SFTP and FTP(S) answers carry no HTTP status (0): none is recorded.
        let httpStatus = response.flatMap { $0.status > 0 ? $0.status : nil }
        let bytesSent: Int64
        switch result {
        case .success(let r): bytesSent = r.bytesSent
        case .failure(.broken(_, let b)), .failure(.cancelled(let b, _)): bytesSent = b
        case .failure: bytesSent = 0
        }
        if let response {
            file.manifest.remote = Manifest.Remote(url: response.effectiveURL.isEmpty ? request.url : response.effectiveURL,
                                                   httpStatus: httpStatus, etag: response.etag,
                                                   location: response.location, response: response.body,
                                                   tus: file.manifest.remote?.tus, remoteFile: file.manifest.remote?.remoteFile)
        }
        held.facts = Manifest.AttemptFacts(bytesSent: bytesSent, httpStatus: httpStatus)
        let outcome: AttemptOutcome
        var changed: String?
        switch disposition {
        case .sent(let response):
            outcome = .delivered(status: response.status)
            changed = changedSinceClaim(file)
        case .retryLater(let reason, let retryAfter):
            outcome = .retryable(reason: reason, retryAfter: retryAfter)
            changed = changedSinceClaim(file)
        case .permanent(let reason):
            outcome = .permanent(reason: reason)
            changed = changedSinceClaim(file)
        case .offline(let reason):
            outcome = .unreachable(reason: reason)
        case .rejected(let reason):
            outcome = .rejected(reason: reason)
        case .hostKeyMismatch(let reason):
            outcome = .hostKeyMismatch(reason: reason)
        case .interrupted(let connected):
            outcome = .interrupted(connected: connected)
        }
        return AttemptReport(outcome: outcome, changed: changed, countedAttempts: file.manifest.countedAttempts, size: size,
                             bytesSent: bytesSent, seconds: seconds, httpStatus: httpStatus, id: file.manifest.id)
    }

    /// Nil when the file is as it was claimed; otherwise what differs. Checks both the open
    /// descriptor (written in place) and the path (replaced by another file).
    private func changedSinceClaim(_ file: ClaimedFile) -> String? {
        file.uploadSource.changeSinceClaim() ?? outdatedClaim(file) ?? file.contentChanged()
    }

    /// Nil while the name still leads to the file claimed; otherwise what happened to it.
    private func outdatedClaim(_ file: ClaimedFile) -> String? {
        let atPath: FileSystem.Status
        do {
            guard let found = try spool.fs.statusIfPresent(file.path, in: spool.directory(.outbox)) else { return "removed from the outbox" }
            atPath = found
        } catch {
            return "cannot look at its name: \(error)"
        }
        if atPath.inode != file.status.inode || atPath.device != file.status.device { return "replaced by another file" }
        return nil
    }
}

/// Logs progress of long uploads every 10 s: percent, rate, ETA.
struct ProgressLog: Sendable {
    let file: RelativePath
    let size: Int64
    let profile: String
    let logger: Logger
    let clock: any Clock

    var callback: @Sendable (Int64) -> Void {
        let started = clock.monotonic
        let last = LastLine(started)
        return { [self] sent in
            let now = clock.monotonic
            let due = last.time.withLock { last -> Bool in
                guard now - last >= 10 else { return false }
                last = now
                return true
            }
            guard due else { return }
            let elapsed = now - started
            let rate = elapsed > 0 ? Double(sent) / elapsed : 0
            let eta = rate > 0 ? Double(size - sent) / rate : 0
            logger.info("uploading", ["profile": profile, "file": file.logSafe,
                                      "percent": LogNumbers.fixed(size > 0 ? Double(sent) * 100 / Double(size) : 100, places: 1),
                                      "rate": LogNumbers.rate(sent, elapsed), "eta_s": LogNumbers.fixed(eta, places: 0)])
        }
    }
}

/// When the last progress line was written.
private final class LastLine: Sendable {
    let time: Mutex<Double>
    init(_ start: Double) { time = Mutex(start) }
}
