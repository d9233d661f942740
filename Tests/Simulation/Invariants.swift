import Foundation
import Glibc
import UploaderSupport
import UploaderConfig
import UploaderSpool

/// The properties every schedule must keep, each with a name a violation is reported under.
enum Invariant: String, CaseIterable, Sendable {
    /// Every file the producer dropped (and still stands by) is in the outbox, `sent/` or `retry/`, or kept by the server.
    /// A file written in place and never fsynced is owed as the disk kept it: a power cut may
    /// leave it empty, short, older or gone, and the daemon cannot deliver bytes the disk never
    /// kept (`Producer.afterCrash`); what it claimed and fsynced itself it must not lose.
    case noFileLost
    /// No file (inode) is in two places among the outbox, `sent/` and `retry/`.
    case noFileInTwoPlaces
    /// In `sent/` and `retry/` every file has its manifest and every manifest its file.
    case filesAndManifestsPaired
    /// Every manifest parses.
    case manifestsParse
    /// The server never has requests of two attempts under way at once for one upload (its
    /// Idempotency-Key; for S3 and tus the manifest id the upload was created under): an S3
    /// upload's parts run side by side, but only within one attempt.
    case neverTwoUploadsAtOnce
    /// Counted attempts never exceed the requests that reached the server under that key, and
    /// every request was recorded as an attempt, but for those made before the last power cut
    /// (which may undo a recorded attempt). An S3 or tus attempt is several requests: it is
    /// counted once, by the first request its job sent for the upload (`SimServer.Request.opens`);
    /// one that later met a refused connect ends offline and need not be recorded.
    case attemptsMatchRequests
    /// A manifest in `sent/` says sent only when the server kept exactly the bytes of the file
    /// beside it under its key: the body of a plain PUT or S3 PutObject, the object a
    /// CompleteMultipartUpload assembled from its parts, or a tus upload that reached its length.
    /// Where a power cut has since undone a careless producer's unsynced write of that file
    /// (`Producer.torn`), the file holds less than the daemon read and sent: the server must then
    /// have kept the complete content under the key. With `digest = none`, a rewrite of the same
    /// size in the same instant (`Producer.sameInstantRewrites`) leaves size and mtime as they
    /// were, and the server may hold the bytes it replaced (the documented limit). A short
    /// payload filed as sent for a file whose content was durable is always a violation.
    case sentOnlyWithExactBytes
    /// The same content was kept under one Idempotency-Key (manifest id) only. Not once a power
    /// cut struck with `digest = none`, nor for a file a claim then filed as unreadable (its record
    /// unhashed): an unhashed key names the file by its ctime, which our own moves change.
    case duplicatesShareKey
    /// Online means working: with the destination reachable, a free slot never waits beside a claimed file.
    case onlineMeansWorking
    /// Once the faults stop and time passes, every file ends in `sent/` or `retry/` as failed.
    case everyFileSettles
    /// Once the faults stop, no half-written temporary manifest is left anywhere in the spool.
    case noLeftoverTemporaries
    /// A SIGTERM stop ends within `shutdown_grace` (plus one second): by then the owner has
    /// stopped and every worker has finished its job and exited.
    case shutdownWithinGrace
    /// An attempt is written down only by a file that holds a transfer slot: no file is given a
    /// slot while its record on the disk still holds an attempt this process opened.
    case slotBeforeAttempt
    /// No manifest counts more attempts than `max_attempts`.
    case maxAttemptsRespected
    /// No more records in the outbox say `uploading` with an attempt this process opened than
    /// there are transfer slots (`concurrency`).
    case recordsWithinSlots
    /// No request comes back before the `Retry-After` the server answered for the same bytes
    /// (capped by `max_backoff`), unless the daemon could no longer know it: `retry --all` reset
    /// it, a crash took its record, or the disk refused to write it.
    case noAttemptBeforeDue
    /// Every record the daemon moved into `.quarantine/` is there afterwards, across crashes and
    /// power cuts, unless a power cut undid the move and put it back where it came from.
    case quarantineKeepsRecords
    /// No S3 part is sent again to its multipart upload once the client knew the store held it:
    /// its 2xx reached the client, or a ListParts answer that named it did (a part whose answer
    /// was lost may go again; see `SimS3Server`).
    case s3PartsSentOnce
    /// No tus PATCH starts below an offset the server already reported to the client for that
    /// upload (in a PATCH's answer or a HEAD's; see `SimTusServer`).
    case tusOffsetForward
    /// An SFTP server's final name only ever holds complete bytes of one version of one file: every
    /// rename onto one moves bytes all sent for one version, as many as it has (see `SimSFTPServer`).
    case sftpFinalNameWhole
    /// With hooks configured, every file that reached sent/ or failed had its hook's command
    /// started at least once (`on_failed` again after the operator took it back), by the end.
    case hooksRunAtLeastOnce
    /// A hook never runs again once a finished run of it is recorded in the file's manifest.
    case hooksNeverAfterFinished
    /// No request leaves for an upload ordered while every `upload_window` was closed.
    case uploadsWithinWindows
    /// A delivered file leaves sent/ only as `after_send = delete` (after its `on_sent` run) or
    /// `keep_sent` / `keep_sent_bytes` allow.
    case sentRemovedOnlyAsAllowed
    /// A slot goes to the claimed file that ranks first by `order` (oldest, newest, smallest,
    /// largest; ties by name): no file ready beside it ranks before it, by what the world told
    /// the daemon of each (size and mtime), among files whose facts never changed.
    case orderWithinSlots
    /// The owner's timer keeps its deadlines: once the clock has passed the deadline the owner
    /// last set and no thread is left to run (the timer had its turn), a tick came for it.
    case deadlinesKept
    /// A directory fsync that returned to its caller covers every entry change made in that
    /// directory before the caller asked: what `DirectorySyncer` told durable is durable.
    case syncMeansDurable
    /// One process per spool: a second `uploader run` or `run --once` started beside the daemon
    /// stops at the spool's lock (production's `SpoolStartUp`), never holding it while the daemon does.
    case oneProcessPerSpool

    static let atTheEnd: [Invariant] = [.manifestsParse, .noFileLost, .noFileInTwoPlaces, .filesAndManifestsPaired,
                                        .attemptsMatchRequests, .sentOnlyWithExactBytes, .duplicatesShareKey,
                                        .everyFileSettles, .noLeftoverTemporaries, .maxAttemptsRespected,
                                        .quarantineKeepsRecords, .s3PartsSentOnce, .tusOffsetForward, .sftpFinalNameWhole,
                                        .hooksRunAtLeastOnce]
}

/// A broken invariant: which, what was seen, and after how many trace lines.
struct Violation: Sendable, Equatable {
    var invariant: Invariant
    var detail: String
    var step: Int
}

/// What the disk holds in the three areas (the volatile view: what a process would see now).
struct SpoolView {
    struct File {
        var area: Spool.Area
        var name: String
        var content: [UInt8]
        var inode: UInt64
    }

    var files: [File] = []
    var manifests: [(area: Spool.Area, name: String, manifest: Manifest?)] = []
    /// Temporary manifests (`.upl-tmp-*`) anywhere in the three areas or the outbox's hidden directory.
    var temporaries: [String] = []
    /// Contents under `.upl-adopt.NAME` in the outbox: another user's file swapped out by its copy
    /// and not yet settled (a crash cut the adoption); the start-up gives it back its name when it
    /// holds newer bytes, so its content is not lost.
    var adoptionLeftovers: [[UInt8]] = []

    init(disk: SimDisk, paths: SpoolPaths) {
        temporaries += disk.names(in: paths.outboxTemporary).filter { $0.hasPrefix(TemporaryNames.prefix) }.map { paths.outboxTemporary + "/" + $0 }
        for (area, dir) in [(Spool.Area.outbox, paths.outbox), (.sent, paths.sent), (.retry, paths.retry)] {
            walk(disk, area, dir, under: "")
        }
    }

    /// One directory of an area and its subdirectories (`recursive = yes`); names are relative to the area.
    private mutating func walk(_ disk: SimDisk, _ area: Spool.Area, _ root: String, under prefix: String) {
        let here = prefix.isEmpty ? root : root + "/" + prefix
        for name in disk.names(in: here) {
            let path = here + "/" + name
            let relative = prefix.isEmpty ? name : prefix + "/" + name
            if name.hasPrefix(TemporaryNames.prefix) {
                temporaries.append(path)
            } else if area == .outbox, name.hasPrefix(".upl-adopt.") {
                if let content = disk.contents(path) { adoptionLeftovers.append(content) }
            } else if name.hasPrefix(".") {
                continue
            } else if disk.isDirectory(path) {
                walk(disk, area, root, under: relative)
            } else if Spool.isManifestName(RelativePath(name)) {
                let manifest = disk.contents(path).flatMap(disk.manifestMemo.manifest)
                manifests.append((area, relative, manifest))
            } else if let content = disk.contents(path), let inode = disk.inode(path) {
                files.append(File(area: area, name: relative, content: content, inode: inode))
            }
        }
    }
}

extension Simulation {
    /// Each of `invariants` in turn, the spool read once for all of them (nothing changes the
    /// disk between them).
    func check(_ invariants: [Invariant]) {
        var view: SpoolView?
        for invariant in invariants where violation == nil && trialFailed != true {
            if view == nil { view = SpoolView(disk: disk, paths: profile.spool) }
            check(invariant, view: view)
        }
    }

    func check(_ invariant: Invariant, view: SpoolView? = nil) {
        guard violation == nil else { return }
        switch invariant {
        case .neverTwoUploadsAtOnce:
            if let id = server.overlaps.first { fail(invariant, "two requests at once under \(id)") }
        case .noAttemptBeforeDue:
            if let early = server.early.first { fail(invariant, early) }
        case .onlineMeansWorking:
            checkOnlineMeansWorking()
        case .s3PartsSentOnce, .tusOffsetForward, .sftpFinalNameWhole:
            checkProtocol(invariant)
        case .shutdownWithinGrace, .hooksNeverAfterFinished, .sentRemovedOnlyAsAllowed, .orderWithinSlots, .oneProcessPerSpool:
            break  // judged as it happens (`restartIfStopped`, `hookStarted`, `daemonUnlinks`, `checkOrder`, `startSecondInstance`)
        case .uploadsWithinWindows:
            checkWindowAtRequest()
        case .recordsWithinSlots:
            checkRecordsWithinSlots()
        case .quarantineKeepsRecords:
            if let lost = quarantineWatch.lost(disk) { return fail(invariant, "\(lost) is gone, and its record is not back where it came from") }
            quarantineWatch.look(disk)
        case .slotBeforeAttempt:
            break
        case .deadlinesKept:
            checkDeadlinesKept()
        case .syncMeansDurable:
            if let broken = process.syncWitness.firstBroken { fail(invariant, broken) }
        default:
            checkSpool(invariant, view ?? SpoolView(disk: disk, paths: profile.spool))
        }
    }

    /// Why a `failed` record is wrong, or nil when DESIGN §5 allows it: its attempts ran out
    /// (`max_attempts`), or its last attempt ended in a permanent error — a status other than
    /// 2xx, 401, 403, 408, 429 and 5xx, or a local error such as an unreadable file.
    static func failedWithoutCause(_ m: Manifest, maxAttempts: Int) -> String? {
        if m.countedAttempts >= maxAttempts { return nil }
        guard let last = m.attempts.last(where: { $0.interrupted != true && $0.rejected != true }) else {
            // A file its claim could not read fails without an attempt (DESIGN §5: a local error).
            if m.lastError?.hasPrefix("cannot read file: ") == true { return nil }
            return "it has no attempt to fail on (last error: \(m.lastError ?? "none"))"
        }
        if let status = last.httpStatus {
            let retryable = status == 408 || status == 429 || status >= 500 || status == 401 || status == 403
            return retryable ? "its last answer, HTTP \(status), is retryable (\(m.countedAttempts) of \(maxAttempts) attempts)" : nil
        }
        if last.retryable == true { return "its last attempt ended retryable: \(last.error ?? "?") (\(m.countedAttempts) of \(maxAttempts) attempts)" }
        return nil
    }

    /// Checked as every request leaves, so it reads the outbox's records only, and decodes only
    /// those whose bytes mention `uploading`.
    func checkRecordsWithinSlots() {
        guard disk.faultsDrawn == faultsAtBoot else { return }
        let outbox = profile.spool.outbox
        let marker = Array("uploading".utf8)
        let open = disk.regularFiles(in: outbox).filter { name, bytes in
            guard name.first != UInt8(ascii: "."), Spool.isManifestName(RelativePath(bytes: name)), Self.bytes(bytes, contain: marker),
                  let m = disk.manifestMemo.manifest(bytes), m.state == .uploading, let last = m.attempts.last,
                  last.endedAt == nil, let started = Timestamp.parse(last.startedAt) else { return false }
            return started >= process.bootedAt
        }
        if open.count > process.configured.concurrency {
            let names = open.map { RelativePath(bytes: $0.name).display }.sorted()
            fail(.recordsWithinSlots, "\(open.count) records say uploading with \(process.configured.concurrency) slots: \(names)")
        }
    }

    /// Whether `needle` occurs in `haystack`. The generic `contains` of a collection took a third
    /// of the simulator's time here; this compares with `memcmp` where the first byte matches.
    static func bytes(_ haystack: [UInt8], contain needle: [UInt8]) -> Bool {
        guard let first = needle.first else { return true }
        guard needle.count <= haystack.count else { return false }
        return haystack.withUnsafeBufferPointer { h in
            needle.withUnsafeBufferPointer { n in
                for i in 0...(h.count - n.count) where h[i] == first {
                    if memcmp(h.baseAddress! + i, n.baseAddress!, n.count) == 0 { return true }
                }
                return false
            }
        }
    }

    /// Checked whenever nothing but the world can run: a deadline the owner set that the clock has
    /// passed (give or take the timer's tolerance) must have ticked by then, since the timer's
    /// thread woke as the clock moved.
    func checkDeadlinesKept() {
        guard !process.view.dead, let due = process.ticker.due, let by = process.ticker.wakesBy, clock.monotonic >= by,
              process.scheduler.runnable.workers == 0 else { return }
        fail(.deadlinesKept, "the owner's deadline came \(LogNumbers.fixed(clock.monotonic - due, places: 3)) s ago and its timer never ticked")
    }

    /// Judged from what the world saw the owner start and end (`WorkSeen`) and from what it told
    /// the daemon of each file, and whether it may start from what its jobs reported of the
    /// destination and the configured windows, never the core's own state: a free slot may wait only for a claim still running for a file
    /// that ranks before the first ready one (`order` holds at the server, and claims finish in
    /// any order), or for a settle to rewrite a record that still says `uploading`.
    func checkOnlineMeansWorking() {
        let seen = process.seen, slots = process.configured.concurrency
        guard !seen.ready.isEmpty, seen.slots.count < slots, seen.openRecords < slots else { return }
        // Whether the owner may start, from the world: no stop sent, the destination heard up and
        // our credentials not in doubt (`WorkSeen`), and an upload window open by the configured
        // ones (the owner has just stepped at this time).
        guard process.stopRequested == nil, seen.destinationHeardUp, !seen.credentialsRefused,
              process.configured.windows.phase(at: clock.now, in: .gmt).open, !claimRunningForABetterFile(seen) else { return }
        fail(.onlineMeansWorking, "online with \(seen.slots.count) of \(slots) slots busy and \(seen.ready.count) claimed files waiting")
    }

    /// Whether a claim ahead still runs for a file that may rank before every ready one: one whose
    /// facts the world told and never changed, and that ranks first by them; or any, when some
    /// file's facts are not known for sure.
    private func claimRunningForABetterFile(_ seen: WorkSeen) -> Bool {
        guard !seen.claimsAhead.isEmpty else { return false }
        let order = process.configured.order
        var firstReady: (Int64, RelativePath)?
        for path in seen.ready {
            guard let facts = told.steady(path) else { return true }
            let key = Self.key(facts, order)
            if firstReady.map({ key < $0 }) ?? true { firstReady = key }
        }
        guard let firstReady else { return false }
        return seen.claimsAhead.contains { path in told.steady(path).map { Self.key($0, order) < firstReady } ?? true }
    }

    private func checkSpool(_ invariant: Invariant, _ view: SpoolView) {
        let hashes = Dictionary(view.files.map { (Producer.hash($0.content), $0) }, uniquingKeysWith: { a, _ in a })
        switch invariant {
        case .manifestsParse:
            if let bad = view.manifests.first(where: { $0.manifest == nil }) { fail(invariant, "\(bad.area.rawValue)/\(bad.name) does not parse") }
        case .noFileLost:
            let kept = server.keptByContent
            let leftovers = Set(view.adoptionLeftovers.map(Producer.hash))
            for hash in producer.expected where hashes[hash] == nil && kept[hash] == nil && !leftovers.contains(hash) {
                fail(invariant, "content \(hash.prefix(12)) (written as \(producer.origin[hash] ?? "?")) is nowhere: not in the spool, not on the server")
                return
            }
        case .noFileInTwoPlaces:
            var seen: [UInt64: String] = [:]
            for file in view.files {
                if let other = seen[file.inode] {
                    fail(invariant, "one file at \(other) and \(file.area.rawValue)/\(file.name)")
                    return
                }
                seen[file.inode] = "\(file.area.rawValue)/\(file.name)"
            }
        case .filesAndManifestsPaired:
            for area in [Spool.Area.sent, .retry] {
                let files = Set(view.files.filter { $0.area == area }.map(\.name))
                let manifests = Set(view.manifests.filter { $0.area == area }.map { Spool.fileName(forManifest: RelativePath($0.name)).display })
                if let lonely = files.subtracting(manifests).sorted().first { return fail(invariant, "\(area.rawValue)/\(lonely) has no manifest") }
                if let orphan = manifests.subtracting(files).sorted().first(where: { !deletionDue($0, in: area) }) {
                    return fail(invariant, "\(area.rawValue)/\(orphan).manifest.json has no file")
                }
            }
        case .attemptsMatchRequests:
            for entry in view.manifests where entry.area != .outbox {
                guard let m = entry.manifest else { continue }
                let counted = m.attempts.filter { $0.interrupted != true }.count
                let requests = server.requestCount(m.id)
                if counted > requests {
                    return fail(invariant, "\(entry.area.rawValue)/\(entry.name): \(counted) attempts counted, \(requests) requests reached the server")
                }
                // A power cut may undo the record of an attempt made before it; none made since.
                let since = server.recordableCount(m.id, from: requestsBeforeLastPowerCut)
                if since > m.attempts.count {
                    return fail(invariant, "\(entry.area.rawValue)/\(entry.name): \(since) requests reached the server since the last power cut, "
                                + "\(m.attempts.count) attempts recorded")
                }
            }
        case .sentOnlyWithExactBytes:
            for entry in view.manifests where entry.area == .sent {
                guard let m = entry.manifest, m.state == .sent else { continue }
                let name = Spool.fileName(forManifest: RelativePath(entry.name)).display
                guard let file = view.files.first(where: { $0.area == .sent && $0.name == name }) else { continue }
                let hash = Producer.hash(file.content)
                let kept = server.keptHashes(m.id)
                // Unhashed, a same-size rewrite in the same instant goes unseen (docs/guarantees.md).
                let unseen = profile.digest == .none ? producer.sameInstantRewrites[file.inode] ?? [] : []
                if !kept.contains(hash), !(producer.torn[file.inode].map(kept.contains) ?? false), kept.isDisjoint(with: unseen) {
                    return fail(invariant, "sent/\(name) is marked sent but the server never kept its bytes under \(m.id)")
                }
            }
        case .duplicatesShareKey:
            // Unhashed (`digest = none`), a key names the file by its ctime, which our own moves
            // change and a power cut can bring back older: after a cut took the record of an upload,
            // the same bytes may come back under a new key (README, "What is proven").
            if profile.digest == .none && powerCuts > 0 { return }
            // So is the record of a file a claim could not read (filed as failed, unhashed) once a
            // cut may have taken the record of its upload.
            for (hash, ids) in server.keptByContent where ids.count > 1 && !producer.remnants.contains(hash) && !producer.repeated.contains(hash)
                && !unhashedAfterPowerCut.contains(hash) {
                return fail(invariant, "content \(hash.prefix(12)) kept under \(ids.count) keys: \(ids.sorted().joined(separator: ", "))")
            }
        case .everyFileSettles:
            for hash in producer.expected {
                guard let file = hashes[hash] else {
                    if removedFromSent(hash) { continue }
                    return fail(invariant, "content \(hash.prefix(12)) is not in sent/ or retry/ after the faults stopped")
                }
                let manifest = view.manifests.first { $0.area == file.area && $0.name == file.name + Spool.manifestSuffix }?.manifest
                switch (file.area, manifest?.state) {
                case (.sent, .sent?): continue
                case (.retry, .failed?):
                    if let why = Self.failedWithoutCause(manifest!, maxAttempts: maxAttemptsSeen.min()!) {
                        return fail(invariant, "\(file.area.rawValue)/\(file.name) failed, but \(why)")
                    }
                default:
                    return fail(invariant, "\(file.area.rawValue)/\(file.name) ends as \(manifest?.state.rawValue ?? "no manifest")")
                }
            }
            if let left = view.manifests.first(where: { $0.area == .outbox }) { fail(invariant, "outbox/\(left.name) left behind") }
        case .hooksRunAtLeastOnce:
            checkHooksRan(view)
        case .noLeftoverTemporaries:
            if let left = view.temporaries.first { fail(invariant, "\(left) left behind") }
        case .maxAttemptsRespected:
            for entry in view.manifests {
                guard let m = entry.manifest, m.countedAttempts > maxAttemptsSeen.max()! else { continue }
                return fail(invariant, "\(entry.area.rawValue)/\(entry.name) counts \(m.countedAttempts) attempts (max \(maxAttemptsSeen.max()!))")
            }
        case .neverTwoUploadsAtOnce, .onlineMeansWorking, .shutdownWithinGrace, .slotBeforeAttempt, .recordsWithinSlots,
             .noAttemptBeforeDue, .quarantineKeepsRecords, .s3PartsSentOnce, .tusOffsetForward, .sftpFinalNameWhole,
             .hooksNeverAfterFinished, .uploadsWithinWindows, .sentRemovedOnlyAsAllowed, .orderWithinSlots, .deadlinesKept, .syncMeansDurable,
             .oneProcessPerSpool:
            break
        }
    }
}
