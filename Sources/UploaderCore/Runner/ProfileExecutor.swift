import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// Carries out a profile's effects: claims, uploads, settles, moves back, quarantines, passes
/// over sent/ and rescans on the worker pool, probes as background jobs, log lines at once;
/// each job reports back to the owner as an event. It decides nothing: what is done and when —
/// which record an upload puts in place, whether a delivered file is filed by its job, what
/// becomes of a file changed during its move or of a record without a file — came from
/// `ProfileCore`; the jobs report facts, and the core's next effects follow from them.
package final class ProfileExecutor: Sendable {
    let profile: Profile
    let spool: Spool
    let lifecycle: FileLifecycle
    let claimer: Claimer
    let builder: RequestBuilder
    /// The profile's protocol (plain HTTP, S3, tus), chosen once by `DestinationFactory`.
    let destination: any UploadDestination
    let rateLimiter: RateLimiter?
    let hostname: String
    /// The daemon's environment, passed on to hooks.
    let environment: [String: String]
    let logger: Logger
    let clock: any Clock
    let probe: (any ReachabilityProbe)?
    let route: (any RouteLookup)?
    let hooks: HookRunner
    let jobs: any JobQueue
    /// The start-up scan and rescans of the outbox.
    package let recovery: Recovery
    /// `keep_sent`, `keep_sent_bytes`: a pass over sent/, when the core asks for one.
    package let retention: Retention
    /// The uploads in flight and their progress, for `status`.
    package let inFlight = InFlightBoard()
    private let held = HeldFiles()
    /// Delivered files whose record is in place, waiting for the filer to move them into sent/.
    private let filings = FilingLine()
    /// Claims ahead waiting for a claimer, which claims them in batches.
    private let claims = ClaimLine()
    private let report: @Sendable (ProfileEvent) -> Void
    private let finished: @Sendable (ProfileEffect) -> Void

    /// What the executor works with besides the profile: the spool's claimer and lifecycle,
    /// the shared rate limiter, the probe, where jobs run, and what hooks inherit.
    package struct Parts: Sendable {
        package var claimer: Claimer
        package var lifecycle: FileLifecycle
        package var rateLimiter: RateLimiter?
        package var probe: (any ReachabilityProbe)?
        package var jobs: any JobQueue
        package var hostname: String
        package var environment: [String: String]
        /// Asked which interface the route to the destination leaves by (`interfaces`).
        package var route: (any RouteLookup)?
        /// What the destination protocol keeps across reloads (shared by the profile's workers).
        package var memory: DestinationMemory
        /// Where the destination's own threads (S3 parts) run, and their transports.
        package var threads: DestinationThreads

        package init(claimer: Claimer, lifecycle: FileLifecycle, rateLimiter: RateLimiter?, probe: (any ReachabilityProbe)?,
                     jobs: any JobQueue, hostname: String, environment: [String: String], route: (any RouteLookup)? = nil,
                     memory: DestinationMemory = DestinationMemory(), threads: DestinationThreads = DestinationThreads()) {
            self.threads = threads
            self.route = route
            self.memory = memory
            self.claimer = claimer
            self.lifecycle = lifecycle
            self.rateLimiter = rateLimiter
            self.probe = probe
            self.jobs = jobs
            self.hostname = hostname
            self.environment = environment
        }
    }

    /// `report` feeds events back to the owner; `finished` hears `.drained` and `.stopped`.
    package init(profile: Profile, spool: Spool, parts: Parts, hooks: HookRunner, logger: Logger, clock: any Clock,
         report: @escaping @Sendable (ProfileEvent) -> Void, finished: @escaping @Sendable (ProfileEffect) -> Void) {
        self.profile = profile
        self.spool = spool
        self.claimer = parts.claimer
        self.lifecycle = parts.lifecycle
        self.rateLimiter = parts.rateLimiter
        self.probe = parts.probe
        self.route = parts.route
        self.hostname = parts.hostname
        self.environment = parts.environment
        self.hooks = hooks
        self.logger = logger
        self.clock = clock
        self.report = report
        self.finished = finished
        builder = RequestBuilder(profile: profile)
        destination = DestinationFactory.make(for: profile, logger: logger, clock: clock, memory: parts.memory, threads: parts.threads)
        jobs = parts.jobs
        recovery = Recovery(spool: spool, lifecycle: parts.lifecycle, ignore: IgnoreRules(patterns: profile.ignore),
                            recursive: profile.recursive, logger: logger, clock: clock)
        retention = Retention(spool: spool, keep: profile.keepSent, keepBytes: profile.keepSentBytes, logger: logger)
    }

    package func perform(_ effect: ProfileEffect) {
        switch effect {
        case .claim(let path):
            let file = held.hold(path)
            // A claim ahead is not urgent: a worker stepping the owner keeps it for after its own job.
            if claims.add(ClaimLine.Claim(path: path, file: file)) {
                jobs.submit({ [self] _ in claimWaiting() }, keep: .later, lane: .background)
            }
        case .upload(let path, let plan):
            jobs.submit({ [self] transport in send(path, plan, transport: transport) }, keep: .ifFinishing, lane: .urgent)
        case .claimAndUpload(let path, let plan):
            let file = held.hold(path)
            jobs.submit({ [self] transport in
                let claimed = claim(path, into: file)
                // The upload follows: a claim this report starts must not wait behind it.
                WorkerSeat.withoutKeeping { report(.claimed(path, claimed)) }
                guard claimed == .ready else { return }
                send(path, plan, transport: transport)
            }, keep: .ifFinishing, lane: .urgent)
        case .settle(let path, let settlement):
            jobs.submit({ [self] _ in
                reportLast(.settled(path, settle(path, settlement, recorded: { report(.recordRewritten(path)) })))
            }, keep: .ifFinishing, lane: .urgent)
        case .release(let path):
            if let record = held.release(path)?.preparedRecord { spool.discard(record) }
        case .cancelUploads(let paths), .cancelClaims(let paths):
            held.cancel(paths)
        case .moveBack(let path):
            jobs.submit { [self] _ in
                do {
                    let back = try lifecycle.moveBack(fromRetry: path, resetBackoff: false, locked: .shared)
                    reportLast(.movedBack(path, to: spool.queuedFiles([back]).first))
                } catch is FileLifecycle.SupersededRecord {
                    logger.info("removed an old move-back record from retry/; the outbox has a later one", ["profile": profile.name, "file": path.logSafe])
                    reportLast(.movedBack(path, to: nil))
                } catch is FileLifecycle.RecordWithoutFile {
                    reportLast(.recordWithoutFile(path))
                } catch {
                    guard spool.fs.exists(Spool.manifestName(for: path), in: spool.directory(.retry)) else {
                        return reportLast(.movedBack(path, to: nil))
                    }
                    logger.warn("cannot move a file back from retry/; it stays there and is tried again shortly",
                                ["profile": profile.name, "file": path.logSafe, "error": "\(error)"])
                    reportLast(.moveBackFailed(path))
                }
            }
        case .quarantine(let path):
            jobs.submit { [self] _ in
                do {
                    reportLast(.quarantined(path, .movedAside(try spool.quarantineManifest(for: path, in: .retry, now: clock.now))))
                } catch {
                    reportLast(.quarantined(path, .failed("\(error)")))
                }
            }
        case .sweepSent:
            jobs.submit { [self] _ in
                retention.sweep(now: clock.now)
                reportLast(.sentSwept)
            }
        case .rescan:
            jobs.submit { [self] _ in
                rescan()
                reportLast(.rescanned)
            }
        case .probe(let ticket):
            jobs.probe { [self] in report(.probed(ticket, problem: probe?.check())) }
        case .checkRoute:
            jobs.probe { [self] in report(.routeChecked(route?.check() ?? .unknown("no route lookup for this destination"))) }
        case .log(let line):
            logger.log(line.level, line.message, pairs: [("profile", profile.name)] + line.metadata.map { ($0.key, $0.value) })
        case .drained, .stopped:
            finished(effect)
        }
    }

    func heldFile(_ path: RelativePath) -> HeldFile? { held.get(path) }

    /// Scans the outbox as a running daemon does (the temporary directory and adoptions left
    /// alone): the files, and the retries whose cut move it finished, go to the owner.
    package func rescan() {
        // A held file's record is its worker's: a move under way is never settled as a cut one.
        let scan = recovery.scanOutbox(atStartUp: false, held: { [held] in held.get($0) != nil })
        queueHooks(finishedBy: scan)
        let found = PlantedBug.rescanForgetsFound.isActive ? [] : scan.files
        report(.found(spool.queuedFiles(found)))
        if !scan.retries.isEmpty { report(.retriesFound(scan.retries.map { RetryEntry(path: $0.path, due: $0.at) })) }
    }

    /// The hooks due of files whose cut move a scan finished.
    package func queueHooks(finishedBy scan: Recovery.Result) {
        for (area, path) in scan.moved { queueDueHook(of: path, in: area) }
    }

    /// The upload job's whole work: send the file and report the attempt. A file delivered
    /// unchanged is filed in sent/ when the plan says so (`OnDelivered.fileInSent`): its final
    /// record is written here and the attempt reported (which frees the slot's record), and the
    /// move is left to the filer (`FilingLine`), which files every one waiting at once. One
    /// handoff per file fewer than a settle job of its own, and this worker is free at once.
    private func send(_ path: RelativePath, _ plan: UploadPlan, transport: any Transport) {
        var attempt = upload(path, record: plan.record, transport: transport)
        guard plan.onDelivered == .fileInSent, case .delivered = attempt.outcome, attempt.changed == nil else {
            reportLast(.attempted(path, attempt))
            return
        }
        attempt.filing = true
        switch recordForFiling(path) {
        case .recorded(let filing):
            reportLast(.attempted(path, attempt))
            if filings.add(filing) { jobs.submit({ [self] _ in fileWaiting() }, keep: .no, lane: .urgent) }
        case .failed(let settled):
            report(.attempted(path, attempt))
            reportLast(.settled(path, settled))
        case .notInSent:
            var reported = false
            let filed = settle(path, .sent(at: clock.now), recorded: {
                reported = true
                report(.attempted(path, attempt))
            })
            if !reported { report(.attempted(path, attempt)) }
            reportLast(.settled(path, filed))
        }
    }

    /// What became of a delivered file's final record, written for the filer.
    private enum RecordForFiling {
        case recorded(FilingLine.Filing)
        /// The record could not be written: the file stays queued, as its settle says.
        case failed(SettleReport)
        /// Its record does not file it in sent/: settled by the job itself.
        case notInSent
    }

    /// Step 2 of a delivered file's move into sent/: its final record, in place.
    private func recordForFiling(_ path: RelativePath) -> RecordForFiling {
        guard let file = held.get(path), let original = file.manifest else {
            preconditionFailure("settle for a file not held: \(path.logSafe)")
        }
        var manifest = original
        guard manifest.settle(.sent(at: clock.now), facts: file.facts, now: clock.now) == .sent else { return .notInSent }
        markHookDue(&manifest)
        do {
            let recorded = try lifecycle.recordFinal(path, manifest: manifest, inSentHolding: file.claimed?.status)
            return .recorded(FilingLine.Filing(path: path, file: file, manifest: manifest, recorded: recorded))
        } catch {
            held.release(path)
            return .failed(concluded(path, file, manifest, in: .sent, retryDue: nil, .failure(error)))
        }
    }

    /// The filer's job: files everything waiting in sent/ as one batch, then whatever came
    /// meanwhile, until the line is empty.
    private func fileWaiting() {
        while true {
            let batch = filings.take()
            if batch.isEmpty { return }
            let results = lifecycle.fileTogether(batch.map(\.recorded), unchanged: batch.map { unchangedCheck($0.file) })
            for (filing, result) in zip(batch, results) {
                let settled = concluded(filing.path, filing.file, filing.manifest, in: .sent, retryDue: nil, result)
                if case .changedDuringMove = settled {} else { held.release(filing.path) }
                report(.settled(filing.path, settled))
            }
        }
    }

    /// A claimer's job: claims what waits in batches (`ClaimLine`), each batch's attempt records
    /// fsynced together, each claim reported once its record is durable aside; until none waits.
    private func claimWaiting() {
        repeat {
            var batch: [(claim: ClaimLine.Claim, report: ClaimReport)] = []
            var hashed: Int64 = 0
            while batch.count < ClaimLine.batchClaims, hashed < ClaimLine.batchBytes, let next = claims.next() {
                let claimed = claim(next.path, into: next.file)
                hashed += next.file.claimed?.status.size ?? 0
                batch.append((next, claimed))
            }
            prepareAttempts(batch.filter { $0.report == .ready }.map(\.claim.file))
            for (claim, claimed) in batch { report(.claimed(claim.path, claimed)) }
        } while !claims.leaveIfEmpty()
    }

    /// The last thing a job does: a job the owner starts on hearing it may go to this worker
    /// (`JobKeeping.ifFinishing`), which is free the moment this returns.
    private func reportLast(_ event: ProfileEvent) {
        WorkerSeat.finishing { report(event) }
    }

    // MARK: Claim

    private func claim(_ path: RelativePath, into file: HeldFile) -> ClaimReport {
        switch claimer.claim(path, now: clock.now, cancellation: file.cancellation) {
        case .ready(let claimed):
            file.claimed = claimed
            return .ready
        case .unreadable(let error, let manifest):
            file.unreadable = manifest
            return .unreadable(error.description)
        case .vanished:
            held.release(path)
            return .vanished
        case .refused(let reason):
            held.release(path)
            return .refused(reason)
        case .refusedForNow(let reason):
            held.release(path)
            return .refusedForNow(reason)
        case .finishedByRecovery(let area, let target, let due, let another):
            held.release(path)
            queueDueHook(of: target, in: area)
            return .finishedByRecovery(retry: area == .retry ? due.map { RetryEntry(path: target, due: $0) } : nil,
                                       anotherFileUnderName: another)
        case .cancelled:
            held.release(path)
            return .cancelled
        }
    }

    // MARK: Settle

    /// Writes the file's final record and moves it; `recorded` is called once that record is in
    /// place (before its fsyncs and the move), when it no longer says `uploading`. A file found
    /// changed during its move stays held: the core says what becomes of it.
    func settle(_ path: RelativePath, _ settlement: Settlement, recorded: () -> Void) -> SettleReport {
        guard let file = held.get(path), let original = file.manifest else {
            preconditionFailure("settle for a file not held: \(path.logSafe)")
        }
        let report = settle(path, file, original, settlement, recorded: recorded)
        if case .changedDuringMove = report {} else { held.release(path) }
        return report
    }

    private func settle(_ path: RelativePath, _ file: HeldFile, _ original: Manifest, _ settlement: Settlement,
                        recorded: () -> Void) -> SettleReport {
        var manifest = original
        let area = manifest.settle(settlement, facts: file.facts, now: clock.now)
        if area != nil { markHookDue(&manifest) }
        guard let area else {
            do {
                if !PlantedBug.requeueRecordSkipped.isActive { try spool.writeManifest(manifest, for: path, in: .outbox) }
            } catch {
                logger.error("cannot rewrite manifest; the file stays queued", ["profile": profile.name, "file": path.logSafe, "error": "\(error)"])
            }
            return .requeued
        }
        let filed = Result {
            try lifecycle.finish(path, manifest: manifest, to: area, file: file.claimed?.status, unchanged: unchangedCheck(file),
                                 recorded: recorded)
        }
        if case .retry(_, let due) = settlement { return concluded(path, file, manifest, in: area, retryDue: due, filed) }
        return concluded(path, file, manifest, in: area, retryDue: nil, filed)
    }

    /// A file filed away must be the one that was sent: checked again once it has its new name
    /// (and one the producer took away meanwhile is not filed at all). A check that cannot look
    /// at the file throws: the move stops where a crash would, and the next claim of its name
    /// (a rescan, the next start) finishes it.
    private func unchangedCheck(_ file: HeldFile) -> () throws -> String? {
        file.claimed.map { claimed in {
            try claimed.uploadSource.change() ?? claimed.contentChange() ?? claimed.adoptedOriginal?.change(claimed.fs)
        } } ?? { nil }
    }

    /// What a settle's move into `area` comes to: filed (the adopted original dropped, the hook
    /// due queued), back in the outbox as changed, or failed (the file stays in the outbox).
    private func concluded(_ path: RelativePath, _ file: HeldFile, _ manifest: Manifest, in area: Spool.Area, retryDue: Date?,
                           _ filed: Result<RelativePath, any Error>) -> SettleReport {
        do {
            let target = try filed.get()
            dropAdoptedOriginal(of: file.claimed)
            afterFiling(target, in: area, manifest: manifest)
            return .filed(area, target, retryDue: retryDue)
        } catch let changed as FileLifecycle.ChangedDuringMove {
            giveBackAdoptedOriginal(of: file.claimed, path)
            return .changedDuringMove(changed.change, beside: changed.broughtBackAs.flatMap { spool.queuedFiles([$0]).first })
        } catch {
            logger.error("cannot move file to \(area.rawValue)/; it stays in the outbox",
                         ["profile": profile.name, "file": path.logSafe, "error": "\(error)"])
            return .failed
        }
    }

    /// Our copy of another user's file is filed: its original, kept meanwhile, goes (a leftover
    /// the start-up settles if this fails).
    private func dropAdoptedOriginal(of claimed: ClaimedFile?) {
        guard let claimed, let original = claimed.adoptedOriginal else { return }
        do { try original.remove(claimed.fs) } catch {
            logger.warn("cannot remove the original of another user's file after its copy was filed",
                        ["profile": profile.name, "file": original.leftover.logSafe, "error": "\(error)"])
        }
    }

    /// Our copy came back to the outbox as changed: the producer's original takes the name back if
    /// it holds newer bytes, and is claimed afresh.
    private func giveBackAdoptedOriginal(of claimed: ClaimedFile?, _ path: RelativePath) {
        guard let original = claimed?.adoptedOriginal else { return }
        do { try FileAdoption(lifecycle: lifecycle).giveBack(original) } catch {
            logger.warn("cannot give another user's original its name back; the start-up will",
                        ["profile": profile.name, "file": path.logSafe, "error": "\(error)"])
        }
    }
}
