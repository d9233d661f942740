import Foundation

/// One file's trip through a worker: claim, attempt, decide, file away.
extension ProfileRunner {
    func process(_ path: RelativePath, transport: Transport) {
        guard !isStopping else { return }
        switch claimer.claim(path) {
        case .vanished:
            dropVanished(path)
        case .refused(let reason):
            refusedNames.insert(path)
            warnOnce(path, "not uploaded: \(reason)")
        case .finishedByRecovery:
            break
        case .unreadable(let error, var manifest):
            manifest.state = .failed
            manifest.lastError = "cannot read file: \(error)"
            fileAway(path, manifest: manifest, to: .retry, summary: "failed")
        case .ready(let file):
            upload(file, transport: transport)
        }
    }

    /// A file deleted or renamed away before we got to it: forget it and its manifest.
    private func dropVanished(_ path: RelativePath) {
        let manifestName = Spool.manifestName(for: path)
        if FileSystem.exists(manifestName, in: spool.directory(.outbox)) {
            try? FileSystem.unlink(manifestName, in: spool.directory(.outbox))
        }
        logger.info("file vanished before upload; dropped from the queue", ["profile": profile.name, "file": path.logSafe])
    }

    private func upload(_ file: ClaimedFile, transport: Transport) {
        do {
            try lifecycle.beginAttempt(file)
        } catch {
            // Disk full or read-only spool: the file stays as it is; try again later.
            warnOnce(file.path, "cannot write manifest; file stays queued and is tried again later: \(error)")
            let path = file.path
            retries.scheduleRequeue(path, after: 5) { [weak self] in self?.queue.add(path) }
            return
        }
        let values = TemplateValues(path: file.path, id: file.manifest.id, sha256: file.manifest.sha256 ?? "",
                                    size: file.status.size, date: Date(), profile: profile.name, hostname: hostname)
        let flag = CancellationFlag()
        let request: UploadRequest
        do {
            var built = try builder.request(for: file.uploadSource, values: values, rateLimiter: rateLimiter, cancellation: flag)
            built.progress = progressLogger(file)
            request = built
        } catch {
            var manifest = file.manifest
            // No request was made, so this is no attempt (§1): the reason goes to last_error only.
            if let last = manifest.attempts.last, last.endedAt == nil { manifest.attempts.removeLast() }
            manifest.state = .failed
            manifest.lastError = "\(error)"
            fileAway(file.path, manifest: manifest, to: .retry, summary: "failed")
            return
        }
        transferSlots.wait()
        track(flag)
        let started = monotonicSeconds()
        let s3Outcome = s3?.upload(file.uploadSource, resuming: file.s3Progress, values: values, request: request,
                                   transport: transport) { [spool, logger, profile] progress in
            file.recordS3Progress(progress, in: spool, logger: logger, profile: profile.name)
        }
        // Answers can echo credentials back; none may reach the manifest or the log.
        let result = SecretRedactor(secrets: profile.secretValues).redact(s3Outcome?.result ?? transport.send(request))
        untrack(flag)
        transferSlots.signal()
        let seconds = monotonicSeconds() - started
        let now = Date()
        let disposition = s3Outcome?.disposition ?? Disposition.decide(result, now: now)
        let response = try? result.get()
        let bytesSent: Int64
        switch result {
        case .success(let r): bytesSent = r.bytesSent
        case .failure(.broken(_, let b)), .failure(.cancelled(let b, _)): bytesSent = b
        case .failure: bytesSent = 0
        }
        if let response {
            file.manifest.remote = Manifest.Remote(url: response.effectiveURL.isEmpty ? request.url : response.effectiveURL,
                                                   httpStatus: response.status, etag: response.etag,
                                                   location: response.location, response: response.body)
        }
        switch disposition {
        case .sent(let response):
            if let change = changedSinceClaim(file) {
                endAttempt(file, bytes: bytesSent, status: response.status, error: "file changed during upload (\(change)); uploading again", retryable: true)
                requeueAfterChange(file, change)
                return
            }
            endAttempt(file, bytes: bytesSent, status: response.status, error: nil, retryable: nil)
            var manifest = file.manifest
            manifest.state = .sent
            manifest.sentAt = Timestamp.format(now)
            manifest.lastError = nil
            stats.recordSent(bytes: file.status.size, seconds: seconds)
            logger.info("sent", ["profile": profile.name, "file": file.path.logSafe, "id": manifest.id,
                                 "bytes": String(file.status.size), "duration": Self.fixed(seconds, places: 3) + "s",
                                 "rate": Self.rate(file.status.size, seconds), "http.status": String(response.status)])
            fileAway(file.path, manifest: manifest, to: .sent, summary: nil)
        case .retryLater(let reason, let retryAfter):
            endAttempt(file, bytes: bytesSent, status: response?.status, error: reason, retryable: true)
            if let change = changedSinceClaim(file) { return requeueAfterChange(file, change) }
            var manifest = file.manifest
            manifest.lastError = reason
            if manifest.countedAttempts >= profile.maxAttempts {
                manifest.state = .failed
                manifest.lastError = "\(reason) (gave up after \(manifest.countedAttempts) attempts)"
                fileAway(file.path, manifest: manifest, to: .retry, summary: "failed")
                return
            }
            let delay = Backoff.delay(forAttempt: manifest.countedAttempts, base: profile.backoff,
                                      max: profile.maxBackoff, retryAfter: retryAfter)
            let due = now.addingTimeInterval(delay)
            manifest.state = .retry
            manifest.nextAttemptAt = Timestamp.format(due)
            if let target = fileAway(file.path, manifest: manifest, to: .retry, summary: "retry") {
                retries.schedule(target, at: due)
            }
        case .permanent(let reason):
            endAttempt(file, bytes: bytesSent, status: response?.status, error: reason, retryable: false)
            if let change = changedSinceClaim(file) { return requeueAfterChange(file, change) }
            var manifest = file.manifest
            manifest.state = .failed
            manifest.lastError = reason
            fileAway(file.path, manifest: manifest, to: .retry, summary: "failed")
        case .offline(let reason):
            try? lifecycle.revertToQueued(file, dropAttempt: true, reason: reason)
            if mode == .once {
                logger.warn("destination unreachable; leaving files queued", ["profile": profile.name, "error": reason])
                stopForOffline()
            } else {
                queue.add(file.path, front: true)
                reachability.reportUnreachable(reason)
            }
        case .interrupted:
            try? lifecycle.revertToQueued(file, dropAttempt: false, reason: nil)
            logger.info("upload interrupted; file stays queued", ["profile": profile.name, "file": file.path.logSafe, "id": file.manifest.id])
            if !isStopping { queue.add(file.path, front: true) }
        }
    }

    /// Fills in the open attempt's end.
    private func endAttempt(_ file: ClaimedFile, bytes: Int64, status: Int?, error: String?, retryable: Bool?) {
        guard let index = file.manifest.attempts.indices.last else { return }
        file.manifest.attempts[index].endedAt = Timestamp.format(Date())
        file.manifest.attempts[index].bytesSent = bytes
        file.manifest.attempts[index].httpStatus = status
        file.manifest.attempts[index].error = error
        file.manifest.attempts[index].retryable = retryable
    }

    /// Nil when the file is as it was claimed; otherwise what differs. Checks both the open
    /// descriptor (written in place) and the path (replaced by another file).
    private func changedSinceClaim(_ file: ClaimedFile) -> String? {
        guard let now = try? FileSystem.status(fd: file.fd, path: file.path.logSafe) else { return "cannot stat" }
        if now.size != file.status.size { return "size \(file.status.size) → \(now.size)" }
        if now.mtimeNanos != file.status.mtimeNanos { return "modified" }
        guard let atPath = try? FileSystem.status(file.path, in: spool.directory(.outbox)) else { return "removed from the outbox" }
        if atPath.inode != file.status.inode || atPath.device != file.status.device { return "replaced by another file" }
        return nil
    }

    private func requeueAfterChange(_ file: ClaimedFile, _ change: String) {
        var manifest = file.manifest
        manifest.state = .queued
        manifest.lastError = "file changed during upload (\(change))"
        try? spool.writeManifest(manifest, for: file.path, in: .outbox)
        logger.info("file changed during upload; uploading it again", ["profile": profile.name, "file": file.path.logSafe, "change": change])
        queue.add(file.path)
    }

    /// Moves the file and its final manifest to sent/ or retry/; returns its new path there.
    @discardableResult
    private func fileAway(_ path: RelativePath, manifest: Manifest, to area: Spool.Area, summary: String?) -> RelativePath? {
        do {
            let target = try lifecycle.finish(path, manifest: manifest, to: area)
            afterFiling(target, in: area, manifest: manifest)
            if let summary {
                if summary == "failed" { stats.recordFailed() } else { stats.recordRetry() }
                logger.warn(summary == "failed" ? "failed; moved to retry/ (needs uploader retry)" : "will retry",
                            ["profile": profile.name, "file": path.logSafe, "id": manifest.id,
                             "attempts": String(manifest.countedAttempts), "next_attempt_at": manifest.nextAttemptAt ?? "-",
                             "error": manifest.lastError ?? ""])
            }
            return target
        } catch {
            logger.error("cannot move file to \(area.rawValue)/; it stays in the outbox", ["profile": profile.name, "file": path.logSafe, "error": "\(error)"])
            return nil
        }
    }

    /// Logs progress of long uploads every 10 s: percent, rate, ETA.
    private func progressLogger(_ file: ClaimedFile) -> @Sendable (Int64) -> Void {
        let started = monotonicSeconds()
        let last = ProgressClock(started)
        let total = file.status.size
        let name = file.path.logSafe
        let profileName = profile.name
        let logger = self.logger
        return { sent in
            let now = monotonicSeconds()
            guard last.due(now) else { return }
            let elapsed = now - started
            let rate = elapsed > 0 ? Double(sent) / elapsed : 0
            let eta = rate > 0 ? Double(total - sent) / rate : 0
            logger.info("uploading", ["profile": profileName, "file": name,
                                      "percent": String(format: "%.1f", total > 0 ? Double(sent) * 100 / Double(total) : 100),
                                      "rate": ProfileRunner.rate(sent, elapsed), "eta": String(format: "%.0fs", eta)])
        }
    }

    /// `value` with `places` decimals, without `String(format:)` (this runs once per file).
    static func fixed(_ value: Double, places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = Int64((max(0, value) * scale).rounded())
        let whole = scaled / Int64(scale)
        guard places > 0 else { return String(whole) }
        let fraction = String(scaled % Int64(scale))
        return "\(whole)." + String(repeating: "0", count: places - fraction.count) + fraction
    }

    static func rate(_ bytes: Int64, _ seconds: Double) -> String {
        guard seconds > 0 else { return "-" }
        let perSecond = Double(bytes) / seconds
        if perSecond >= Double(1 << 20) { return fixed(perSecond / Double(1 << 20), places: 1) + "MiB/s" }
        return fixed(perSecond / 1024, places: 1) + "KiB/s"
    }
}

/// Says when 10 s have passed since the last progress line.
final class ProgressClock: @unchecked Sendable {
    private let lock = NSLock()
    private var last: Double

    init(_ start: Double) { last = start }

    func due(_ now: Double) -> Bool {
        lock.lock(); defer { lock.unlock() }
        guard now - last >= 10 else { return false }
        last = now
        return true
    }
}
