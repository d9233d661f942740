import Foundation
import UploaderSupport
import UploaderConfig
import UploaderDecisions

/// Turns a path in the outbox into a `ClaimedFile`: opens it safely, checks what it is,
/// and pairs it with its manifest (reused when the file is unchanged, made afresh otherwise).
package struct Claimer: Sendable {
    package enum Outcome {
        /// Ready to upload.
        case ready(ClaimedFile)
        /// Gone before we could open it; its record, if any, has gone with it.
        case vanished
        /// Not something we upload (symlink, FIFO, device, socket, directory, name too long).
        case refused(String)
        /// Not claimed now (a step the disk refused, a file that would not hold still): it stays
        /// queued and is claimed again a little later.
        case refusedForNow(String)
        /// Exists but cannot be read (permissions, I/O): goes to retry/ as failed.
        case unreadable(SystemError, Manifest)
        /// Its manifest already records a final state: recovery finished the move, to this path
        /// in this area; `retryDue` when it now waits in retry/ (so it can be scheduled).
        /// `anotherFileUnderName`: the outbox name now holds another file, to be claimed on its own.
        case finishedByRecovery(Spool.Area, RelativePath, retryDue: Date?, anotherFileUnderName: Bool = false)
        /// Stopped by `cancellation` while hashing (shutdown): nothing was written.
        case cancelled
    }

    package let spool: Spool
    private var fs: any SpoolFileSystem { spool.fs }
    package let profileName: String
    package let digest: DigestMode
    package let mimeTypes: MimeTypes
    package let lifecycle: FileLifecycle
    package let logger: Logger
    /// The running boot's id (`BootID`); nil: records are not checked for another boot's hash.
    package let bootID: String?

    /// Hears of a changed delivery a claim brought back to the outbox beside a new file under
    /// its name: a file of its own, which no watcher event may announce (the daemon made the name).
    package let foundBeside: @Sendable (RelativePath) -> Void

    package init(spool: Spool, profileName: String, digest: DigestMode, mimeTypes: MimeTypes, lifecycle: FileLifecycle, logger: Logger,
                 bootID: String? = nil, foundBeside: @escaping @Sendable (RelativePath) -> Void = { _ in }) {
        self.foundBeside = foundBeside
        self.bootID = bootID
        self.spool = spool
        self.profileName = profileName
        self.digest = digest
        self.mimeTypes = mimeTypes
        self.lifecycle = lifecycle
        self.logger = logger
    }

    /// `cancellation` stops the hash of a large file between chunks.
    package func claim(_ path: RelativePath, now: Date, cancellation: CancellationFlag? = nil) -> Outcome {
        claim(path, now: now, cancellation: cancellation, round: 0)
    }

    private func claim(_ path: RelativePath, now: Date, cancellation: CancellationFlag?, round: Int) -> Outcome {
        let outbox = spool.directory(.outbox)
        let display = path.displayed(in: outbox)
        /// Goes on as `ClaimSetback.next` says; `unreadable`: the error and status a file filed as
        /// unreadable is recorded with.
        func after(_ setback: ClaimSetback, unreadable: (SystemError, FileSystem.Status)? = nil) -> Outcome {
            go(on: setback, path, now: now, cancellation: cancellation, round: round, unreadable: unreadable)
        }
        if Spool.sidecarTooLong(path) { return after(.nameTooLongForSidecar) }
        // lstat first: a symlink, FIFO, socket or device is refused without ever being opened
        // (opening a device can have side effects). What counts afterwards is the descriptor.
        let seen: FileSystem.Status
        do {
            seen = try fs.status(path, in: outbox)
        } catch let error as SystemError {
            return after(error.isNotFound || error.code == .notDirectory ? .nameLeadsNowhere : Self.lookFailed(error))
        } catch {
            return after(.lookFailed(reason: "\(error)", lasting: false))
        }
        guard seen.kind == .regular else { return after(Self.setback(seen)) }
        // A producer's subdirectory that we may not write: the file could be sent but never moved
        // out of it (nor copied to make it ours). Said before any upload, with what to do.
        if let parent = path.parent, !fs.mayWriteDirectory(of: path, in: outbox) {
            return after(.directoryNotWritable(parent: parent.logSafe))
        }
        let opened: Int32
        do {
            opened = try fs.openForReading(path, in: outbox)
        } catch let error as SystemError {
            switch error.code {
            case .noEntry: return after(.nameLeadsNowhere)
            case .loop: return after(.symlinkAtOpen)
            case .noDevice: return after(.deviceAtOpen)
            case .permissionDenied, .notPermitted, .io: return after(.openDenied, unreadable: (error, seen))
            default: return after(Self.lookFailed(error))
            }
        } catch {
            return after(.lookFailed(reason: "\(error)", lasting: false))
        }
        // Every later check, the hash and the upload use this descriptor (O_NOFOLLOW), so a
        // path swapped for a symlink or a FIFO after the lstat above changes nothing.
        var fd = opened
        var status: FileSystem.Status
        do {
            status = try fs.status(fd: fd, path: display)
        } catch let error as SystemError {
            fs.close(fd)
            return after(Self.lookFailed(error))
        } catch {
            fs.close(fd)
            return after(.lookFailed(reason: "\(error)", lasting: false))
        }
        guard status.kind == .regular else {
            fs.close(fd)
            return after(Self.setback(status))
        }
        /// Another user's file we may not link becomes ours first (`FileAdoption`); nil to go on
        /// with `fd` and `status` (then the copy's), else how the claim ends.
        var adoptedOriginal: FileAdoption.KeptOriginal?
        func adopt() -> Outcome? {
            do {
                let recent = now.timeIntervalSince(status.mtime) < ClaimedFile.timestampGranularity
                switch try FileAdoption(lifecycle: lifecycle).adoptIfNeeded(path, fd: fd, status: status, writtenJustBefore: recent) {
                case .notNeeded:
                    return nil
                case .adopted(let copy, let copyStatus, let original):
                    fs.close(fd)
                    (fd, status) = (copy, copyStatus)
                    adoptedOriginal = original
                    logger.debug("another user's file copied to make it ours (its link is refused)", ["file": path.logSafe])
                    return nil
                case .copiedBefore(let original):
                    adoptedOriginal = original
                    return nil
                case .changed:
                    fs.close(fd)
                    return after(.changedWhileCopied)
                }
            } catch {
                fs.close(fd)
                return after(.copyFailed(reason: "\(error)"))
            }
        }
        // An S3 multipart or tus upload begun for the old content: kept so the uploader can end it.
        var staleS3: S3UploadState?
        var staleTus: TusUploadState?
        switch spool.readManifest(for: path, in: .outbox) {
        case .success(let manifest):
            switch RecordAtClaim.judge(manifest, size: status.size, mtimeText: status.mtimeText) {
            case .changedDelivery:
                // A delivery whose move ended but for its outbox record, the name since taken by a
                // new file: the move ends, and the new file is claimed on its own.
                if let moved = movedAnotherFile(path, manifest: manifest, file: status, now: now, after: { after($0) }) {
                    fs.close(fd)
                    return moved
                }
                // Recorded as sent, then written to before the move finished: what is here now was
                // never uploaded. It is claimed afresh below instead of being filed as sent.
                logger.warn("file changed after its upload was recorded; uploading it again", ["file": path.logSafe, "id": manifest.id])
                let naming = spool.storedAsNaming
                let beside = lifecycle.run { disk in SpoolMoves.settleChangedDelivery(path, manifest: manifest, naming: naming, on: &disk) }
                if let beside { foundBeside(beside) }
            case .finishMove(let replacedFileFirst):
                if replacedFileFirst, let moved = movedAnotherFile(path, manifest: manifest, file: status, now: now, after: { after($0) }) {
                    fs.close(fd)
                    return moved
                }
                defer { fs.close(fd) }
                do {
                    let (area, target) = try finishRecorded(path, manifest: manifest, fd: fd, display: display, file: status, now: now)
                    let due = manifest.state == .retry ? (manifest.nextAttemptAt.flatMap(Timestamp.parse) ?? now) : nil
                    return .finishedByRecovery(area, target, retryDue: due)
                } catch is FileLifecycle.ChangedDuringMove {
                    return after(.changedDuringRecordedMove)
                } catch is RecordChangedMeanwhile {
                    return after(.recordChangedMeanwhile)
                } catch {
                    return after(.recordedMoveUnfinished(reason: "\(error)"))
                }
            case .reuseOrAfresh:
                if let unfinished = moveBackLeftInRetry(path, manifest: manifest, file: status, now: now) {
                    fs.close(fd)
                    return after(unfinished)
                }
                let reuse = RecordReuse.decide(manifest, at: path, size: status.size, mtime: status.mtime, mtimeText: status.mtimeText,
                                               wantsDigest: digest != .none, bootID: bootID, granularity: ClaimedFile.timestampGranularity)
                var reused: Manifest?
                switch reuse {
                case .reuse(let record):
                    reused = record
                case .reuseIfHashHolds(let record, let stale):
                    switch Result(catching: { try ClaimedFile.contentHash(fd: fd, size: status.size, fs: fs, display: display,
                                                                          cancellation: cancellation) }) {
                    case .success(let hash) where hash == manifest.sha256:
                        reused = record
                    case .success:
                        (staleS3, staleTus) = (stale.s3, stale.tus)
                    case .failure(is CancellationFlag.Cancelled):
                        fs.close(fd)
                        return .cancelled
                    case .failure(let error):
                        fs.close(fd)
                        return after(.recheckReadFailed(reason: "\(error)"))
                    }
                case .afresh(let stale):
                    (staleS3, staleTus) = (stale.s3, stale.tus)
                }
                if let reused {
                    if let ended = adopt() { return ended }
                    let claimed = ClaimedFile(path: path, fd: fd, status: status, manifest: reused, fs: fs)
                    claimed.writtenJustBefore = now.timeIntervalSince(status.mtime) < ClaimedFile.timestampGranularity
                    claimed.adoptedOriginal = adoptedOriginal
                    return .ready(claimed)
                }
                logger.info("file changed since it was claimed; claiming it afresh", ["file": path.logSafe, "id": manifest.id])
            }
        case .failure(.missing):
            break
        case .failure(let problem):
            do {
                let aside = try spool.quarantineManifest(for: path, in: .outbox, now: now)
                logger.warn("unreadable manifest moved aside; file claimed afresh", ["file": path.logSafe, "manifest": aside, "error": "\(problem)"])
            } catch {
                fs.close(fd)
                return after(.recordUnmovable(reason: "\(error)"))
            }
        }
        if let ended = adopt() { return ended }
        do {
            var sha: String?
            if digest == .sha256 {
                sha = try ClaimedFile.contentHash(fd: fd, size: status.size, fs: fs, display: display, cancellation: cancellation)
                // The digest must be of the version whose size and mtime the record keeps (they make
                // its id): a write between the fstat above and the end of the read leaves the new
                // bytes under the old version's id, and the upload, seeing the new mtime, would send
                // them again under another.
                let hashed = try fs.status(fd: fd, path: display)
                if hashed.size != status.size || hashed.mtimeNanos != status.mtimeNanos {
                    let recourse = ClaimSetback.changedWhileHashed.next(round: round)
                    if recourse != .goOnAsItIs {
                        fs.close(fd)
                        logger.info("file changed while it was hashed; claiming it afresh", ["file": path.logSafe])
                        return go(recourse, path, now: now, cancellation: cancellation, round: round)
                    }
                }
            }
            var fresh = freshManifest(path, status: status, sha256: sha, now: now)
            fresh.claimedInBoot = bootID
            fresh.s3 = staleS3
            fresh.remote = staleTus.map { Manifest.Remote(url: $0.uploadURL, tus: $0) }
            let claimed = ClaimedFile(path: path, fd: fd, status: status, manifest: fresh, fs: fs)
            claimed.writtenJustBefore = now.timeIntervalSince(status.mtime) < ClaimedFile.timestampGranularity
            claimed.adoptedOriginal = adoptedOriginal
            return .ready(claimed)
        } catch is CancellationFlag.Cancelled {
            fs.close(fd)
            return .cancelled
        } catch let error as SystemError {
            // A hint: when not even fstat answers, the file counts as not shrunk and the read's
            // own error is the one reported.
            let shrunk: Bool
            do { shrunk = try fs.status(fd: fd, path: display).size < status.size } catch { shrunk = false }
            fs.close(fd)
            let setback = ClaimSetback.hashReadFailed(shrunk: shrunk)
            if case .claimAgain = setback.next(round: round) {
                logger.info("file changed while it was hashed; claiming it afresh", ["file": path.logSafe])
            }
            return after(setback, unreadable: (error, status))
        } catch {
            fs.close(fd)
            return after(.lookFailed(reason: "\(error)", lasting: false))
        }
    }

    /// A record of a move into retry/ or sent/ whose file already has its new name there, and whose outbox
    /// name leads to another file (`SpoolMoves.settleMoveOfReplacedFile`): that move ends and the
    /// new file is a file of its own. Nil when the record is no such move.
    private func movedAnotherFile(_ path: RelativePath, manifest: Manifest, file: FileSystem.Status, now: Date,
                                  after: (ClaimSetback) -> Outcome) -> Outcome? {
        let naming = spool.storedAsNaming, identity = FileIdentity(device: file.device, inode: file.inode)
        let deletes = lifecycle.afterSend == .delete
        let (settled, error) = lifecycle.run(now: now) { disk in
            (SpoolMoves.settleMoveOfReplacedFile(path, manifest: manifest, file: identity, naming: naming, afterSendDeletes: deletes,
                                                 on: &disk), disk.lastError)
        }
        switch settled {
        case .finished(let place, let record):
            return .finishedByRecovery(place.area, place.path, retryDue: retryDue(record, now: now), anotherFileUnderName: true)
        case .cannotFinish:
            return after(.recordedMoveUnfinished(reason: "\(error)"))
        case .notSuch, .vanished, .cameBack, .claimAfresh:
            return nil
        }
    }

    /// A move back from retry/ cut before its record left retry/ (`SpoolMoves.finishCutMoveBack`) is
    /// finished before the file is claimed: nil to go on; the setback when the disk refuses a step.
    private func moveBackLeftInRetry(_ path: RelativePath, manifest: Manifest, file: FileSystem.Status, now: Date) -> ClaimSetback? {
        let naming = spool.storedAsNaming, identity = FileIdentity(device: file.device, inode: file.inode)
        do {
            _ = try lifecycle.plan(now: now) { disk throws(PlanStop) in
                try SpoolMoves.finishCutMoveBack(path, manifest: manifest, file: identity, naming: naming, on: &disk)
            }
            return nil
        } catch {
            return .moveBackUnfinished(reason: "\(error)")
        }
    }

    /// When a file filed in retry/ by recovery is due (nil for sent/ and failed).
    private func retryDue(_ manifest: Manifest, now: Date) -> Date? {
        manifest.state == .retry ? (manifest.nextAttemptAt.flatMap(Timestamp.parse) ?? now) : nil
    }

    /// No file under this name (`SpoolMoves.settleVanished`): a record naming a move whose file
    /// already has its new name is finished; anything else is a vanished file.
    private func vanished(_ path: RelativePath, now: Date, cancellation: CancellationFlag?, round: Int) -> Outcome {
        let naming = spool.storedAsNaming, deletes = lifecycle.afterSend == .delete
        let (settled, error) = lifecycle.run(now: now) { disk in
            (SpoolMoves.settleVanished(path, naming: naming, afterSendDeletes: deletes, on: &disk), disk.lastError)
        }
        func after(_ setback: ClaimSetback) -> Outcome {
            go(on: setback, path, now: now, cancellation: cancellation, round: round)
        }
        switch settled {
        case .finished(let place, let record):
            return .finishedByRecovery(place.area, place.path, retryDue: retryDue(record, now: now))
        case .cameBack:
            return after(.cameBackUnderName)
        case .claimAfresh(let beside):
            // With a new file under the name, the changed one came back beside it, as a file of its own.
            if let beside { foundBeside(beside) }
            return after(.settledForAfresh)
        case .cannotFinish:
            return after(.recordedMoveUnfinished(reason: "\(error)"))
        case .vanished, .notSuch:
            return .vanished
        }
    }

    /// Performs what `ClaimSetback.next` decides for `setback` in `round`; `unreadable` is the
    /// error and status of a file it files as unreadable.
    private func go(on setback: ClaimSetback, _ path: RelativePath, now: Date, cancellation: CancellationFlag?, round: Int,
                    unreadable: (SystemError, FileSystem.Status)? = nil) -> Outcome {
        let recourse = setback.next(round: round)
        if case .fileAsUnreadable = recourse {
            guard let (error, status) = unreadable else { preconditionFailure("\(setback) files a file as unreadable without its error") }
            return .unreadable(error, freshManifest(path, status: status, sha256: nil, now: now))
        }
        if case .refuseSettlingRecord(let reason) = recourse {
            // A record beside a non-regular entry belongs to a file that was swapped out (e.g. for
            // a symlink during its upload): settled or moved aside, never deleted.
            guard case .notRegular(let kind) = setback else { preconditionFailure("\(setback) settles no record") }
            let naming = spool.storedAsNaming, deletes = lifecycle.afterSend == .delete
            let beside = lifecycle.run(now: now) { disk in
                SpoolMoves.settleRecordBesideEntry(path, what: kind.name, naming: naming, afterSendDeletes: deletes, on: &disk)
            }
            if let beside { foundBeside(beside) }
            return .refused(reason)
        }
        return go(recourse, path, now: now, cancellation: cancellation, round: round)
    }

    /// Performs a recourse that needs nothing but the name and the round: another round, a
    /// vanished name's record settled, the end.
    private func go(_ recourse: ClaimRecourse, _ path: RelativePath, now: Date, cancellation: CancellationFlag?, round: Int) -> Outcome {
        switch recourse {
        case .claimAgain(let next): return claim(path, now: now, cancellation: cancellation, round: next)
        case .settleVanished: return vanished(path, now: now, cancellation: cancellation, round: round)
        case .refuse(let reason): return .refused(reason)
        case .refuseForNow(let reason): return .refusedForNow(reason)
        case .vanished: return .vanished
        case .refuseSettlingRecord, .fileAsUnreadable, .goOnAsItIs: preconditionFailure("\(recourse) needs what the claim saw")
        }
    }

    /// A failed lstat, open or fstat: lasting when the path itself refuses (a symlink on the way,
    /// a directory not searchable, a name too long), else a moment of the disk's.
    private static func lookFailed(_ error: SystemError) -> ClaimSetback {
        .lookFailed(reason: error.description, lasting: [.loop, .permissionDenied, .notPermitted, .nameTooLong].contains(error.code))
    }

    /// The setback of a non-regular entry, named as its `stat` says.
    private static func setback(_ status: FileSystem.Status) -> ClaimSetback {
        switch status.kind {
        case .symlink: .notRegular(.symlink)
        case .directory: .notRegular(.directory)
        case .regular, .other: .notRegular(.other(status.formatName))
        }
    }

    /// The outbox record is no longer the one the claim read: while the claim waited for the
    /// retry-move lock, `uploader retry` moved the file back (another finisher having ended the
    /// move first). The move that record named is over; the claim reads the record again.
    package struct RecordChangedMeanwhile: Error {}

    /// Completes a move whose record already says sent/retry/failed (`SpoolMoves.finishRecorded`)
    /// for the file the claim holds open (`fd`, whose lstat was `file`): a delivery's content must
    /// still be the content filed, as the descriptor tells. Throws `RecordChangedMeanwhile` when,
    /// under the lock, the record is not `manifest` any more, and `ChangedDuringMove` when the file
    /// changed (it is back in the outbox).
    private func finishRecorded(_ path: RelativePath, manifest: Manifest, fd: Int32, display: String, file: FileSystem.Status,
                                now: Date) throws -> (Spool.Area, RelativePath) {
        let naming = spool.storedAsNaming, deletes = lifecycle.afterSend == .delete
        let identity = FileIdentity(device: file.device, inode: file.inode)
        let placed = try lifecycle.plan(now: now, heldFacts: { [fs] in
            try fs.status(fd: fd, path: display).facts
        }) { disk throws(PlanStop) in
            try SpoolMoves.finishRecorded(path, manifest: manifest, file: identity, naming: naming, afterSendDeletes: deletes, on: &disk)
        }
        return (placed.area, placed.path)
    }

    package func freshManifest(_ path: RelativePath, status: FileSystem.Status?, sha256: String?, now: Date) -> Manifest {
        Manifest(
            id: status.map { ManifestID.derive(profile: profileName, path: path, status: $0, sha256: sha256) } ?? ManifestID.random(),
            profile: profileName, path: path,
            size: status?.size ?? 0, mtime: status?.mtimeText ?? Timestamp.format(now), sha256: sha256,
            contentType: mimeTypes.contentType(forName: path.name.display), state: .queued,
            createdAt: Timestamp.format(now))
    }
}
