import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool

/// What the world knows of the hooks that ran: every command started (`SimHookHost`), which
/// failed files the operator took back (their `on_failed` is due again once they fail again),
/// and the finished runs a power cut left on the disk (those can never be undone).
final class SimHookLog {
    private(set) var runs: [SimHookRun] = []
    /// `on_failed` runs started since the operator last took each file back from failed, by key.
    private var failedRunsSinceTakenBack: Set<String> = []
    /// How often the operator took each failed file back (`uploader retry --all`), by key.
    private(set) var takenBack: [String: Int] = [:]
    /// Finished runs a power cut left on the disk, by manifest (its path), hook and file (its key);
    /// forgotten when the daemon unlinks that manifest (a file under the name later is another).
    private var durablyFinished: [String: [String: Int]] = [:]

    func started(_ run: SimHookRun) {
        runs.append(run)
        if run.hook == "on_failed" { failedRunsSinceTakenBack.insert(run.id) }
    }

    /// Take-backs a power cut may still undo (`uploader retry` rewrote the record, the cut came
    /// before its fsync): by the record's name in retry/, its key, the failed record's bytes, and
    /// whether `on_failed` had run since the take-back before.
    private var provisional: [String: (id: String, record: [UInt8], hadRun: Bool)] = [:]

    func tookBack(_ id: String, record name: String? = nil, bytes: [UInt8]? = nil) {
        if let name, let bytes { provisional[name] = (id, bytes, failedRunsSinceTakenBack.contains(id)) }
        takenBack[id, default: 0] += 1
        failedRunsSinceTakenBack.remove(id)
    }

    /// A crash: after a power cut, a take-back whose failed record is back in retry/ byte for
    /// byte never happened. What is on the disk now stays (no take-back is provisional any more).
    func afterCrash(powerCut: Bool, retryRecord: (String) -> [UInt8]?) {
        defer { provisional = [:] }
        guard powerCut else { return }
        for (name, undone) in provisional where retryRecord(name) == undone.record {
            takenBack[undone.id] = (takenBack[undone.id] ?? 1) > 1 ? takenBack[undone.id]! - 1 : nil
            if undone.hadRun { failedRunsSinceTakenBack.insert(undone.id) }
        }
    }

    func ranOnSent(_ id: String) -> Bool { runs.contains { $0.hook == "on_sent" && $0.id == id } }
    func ranOnFailedSinceTakenBack(_ id: String) -> Bool { failedRunsSinceTakenBack.contains(id) }

    func rememberFinished(_ count: Int, of hook: String, id: String, in manifest: String) {
        let key = hook + " " + id
        durablyFinished[manifest, default: [:]][key] = max(durablyFinished[manifest]?[key] ?? 0, count)
    }

    func finished(_ run: SimHookRun) -> Int { durablyFinished[run.manifest]?[run.hook + " " + run.id] ?? 0 }

    func forget(manifest: String) { durablyFinished[manifest] = nil }
}

extension SimDisk {
    /// `lstat` of an absolute path, for the world's checks (not counted, never refused).
    func inspect(_ path: String) -> FileSystem.Status? {
        state.withLock { state in
            guard let inode = try? state.locate(SimDiskState.components(absolute: Array(path.utf8)), followLast: false).inode else { return nil }
            return state.status(inode)
        }
    }
}

extension Simulation {
    var hooksConfigured: Bool { profile.onSent != nil || profile.onFailed != nil }

    /// Finished runs in a manifest, of one hook.
    static func finishedRuns(_ m: Manifest, _ hook: String) -> Int {
        m.hooks?.filter { $0.name == hook && $0.endedAt != nil }.count ?? 0
    }

    /// A hook's command starts: logged, and held to "never again after a finished run is
    /// recorded": its manifest on the disk, and what power cuts left on it, show no finished run of
    /// that hook but those of the times the operator took the file back from failed.
    func hookStarted(_ run: SimHookRun) {
        hookLog.started(run)
        note("hook \(run.hook) runs for \(run.file) (boot #\(run.boot))")
        var finished = hookLog.finished(run)
        if let bytes = disk.contents(run.manifest), let m = disk.manifestMemo.manifest(bytes) {
            finished = max(finished, Self.finishedRuns(m, run.hook))
        }
        let allowed = run.hook == "on_failed" ? hookLog.takenBack[run.id] ?? 0 : 0
        if finished > allowed {
            fail(.hooksNeverAfterFinished, "\(run.hook) runs again for \(run.file): \(finished) finished run(s) recorded"
                 + (allowed > 0 ? ", \(allowed) failure(s) taken back since" : ""))
        }
    }

    /// `uploader retry --all` took a failed file back (its record no longer says failed, even if
    /// the move went no further): its `on_failed` is due again once it fails again.
    func tookBack(_ failed: Manifest, from name: String, record bytes: [UInt8]?) {
        let now = disk.contents(profile.spool.retry + "/" + name).flatMap(disk.manifestMemo.manifest)
        if now?.state != .failed { hookLog.tookBack(failed.id, record: name, bytes: bytes) }
    }

    /// After a power cut the disk holds only what lasts: every finished run seen now stays recorded.
    func rememberFinishedHooks() {
        guard hooksConfigured else { return }
        let paths = profile.spool
        for entry in SpoolView(disk: disk, paths: paths).manifests where entry.area != .outbox {
            guard let m = entry.manifest, m.hooks != nil else { continue }
            let directory = entry.area == .sent ? paths.sent : paths.retry
            for hook in ["on_sent", "on_failed"] {
                let count = Self.finishedRuns(m, hook)
                if count > 0 { hookLog.rememberFinished(count, of: hook, id: m.id, in: directory + "/" + entry.name) }
            }
        }
    }

    /// At the end: every file in sent/ had its `on_sent` run, every failed file its `on_failed`
    /// (since the operator last took it back), and every delivered file gone from the spool
    /// (`after_send = delete`, retention) its `on_sent`, judged by the commands the world saw start.
    func checkHooksRan(_ view: SpoolView) {
        for entry in view.manifests where entry.area != .outbox {
            guard let m = entry.manifest else { continue }
            if m.state == .sent, entry.area == .sent, profile.onSent != nil, !hookLog.ranOnSent(m.id) {
                return fail(.hooksRunAtLeastOnce, "sent/\(entry.name): on_sent never ran for \(m.id)")
            }
            if m.state == .failed, entry.area == .retry, profile.onFailed != nil, !hookLog.ranOnFailedSinceTakenBack(m.id) {
                return fail(.hooksRunAtLeastOnce, "retry/\(entry.name): on_failed never ran for \(m.id) since it failed")
            }
        }
        guard profile.onSent != nil else { return }
        let inSpool = Set(view.files.map { Producer.hash($0.content) })
        let kept = server.keptByContent
        for hash in producer.expected where !inSpool.contains(hash) {
            guard let ids = kept[hash], !ids.contains(where: hookLog.ranOnSent) else { continue }
            return fail(.hooksRunAtLeastOnce, "content \(hash.prefix(12)) left sent/ with no on_sent run under \(ids.sorted())")
        }
    }

    /// `after_send = delete` removes a delivered file before its manifest, and a deletion the disk
    /// refused stays due (its marker in `.hooks-due/`) for the next start: such a manifest may be alone.
    func deletionDue(_ name: String, in area: Spool.Area) -> Bool {
        guard profile.afterSend == .delete, area == .sent else { return false }
        let place = SHA256.hash(Array("sent/".utf8) + Array(name.utf8)).hexString.prefix(32)
        return disk.exists(path: profile.spool.hooksDue + "/" + place + ".on_sent")
    }

    /// A delivered file whose content is no longer in the spool is accounted for when the server
    /// kept it and something removes delivered files from sent/ (`after_send = delete`,
    /// `keep_sent`, `keep_sent_bytes`); whether each removal was allowed is `sentRemovedOnlyAsAllowed`'s.
    func removedFromSent(_ hash: String) -> Bool {
        let removes = profile.afterSend == .delete || profile.keepSent > 0 || profile.keepSentBytes > 0
        return removes && server.keptByContent[hash] != nil
    }

    /// The daemon unlinks a file in sent/ whose last name it is, beside a manifest saying sent: only
    /// `after_send = delete` once its `on_sent` has a finished run (or none is configured), or
    /// retention: older than `keep_sent` by its manifest's time, or sent/ beyond `keep_sent_bytes`.
    func daemonUnlinks(_ path: RelativePath, in directory: String) {
        if Spool.isManifestName(path) { hookLog.forget(manifest: path.displayed(in: directory)) }
        let sent = profile.spool.sent
        guard violation == nil, directory == sent || directory.hasPrefix(sent + "/"),
              !path.name.bytes.starts(with: [UInt8(ascii: ".")]) else { return }
        let file = path.displayed(in: directory)
        if Spool.isManifestName(path) {
            if let status = disk.inspect(file) { sentManifestsUnlinked[file] = status.size }
            return
        }
        let manifestPath = Spool.manifestName(for: path).displayed(in: directory)
        if let status = disk.inspect(file), status.kind == .regular, status.links > 1 {
            // Its other name keeps it: taken out of sent/, not deleted.
            sentMovedOutSinceListing += status.size + (sentManifestsUnlinked[manifestPath] ?? 0)
            return
        }
        guard let status = disk.inspect(file), status.kind == .regular, status.links == 1,
              let bytes = disk.contents(manifestPath), let m = disk.manifestMemo.manifest(bytes), m.state == .sent,
              let record = disk.inspect(manifestPath) else { return }
        // Not what was sent (written to during its move, on its way back to the outbox, and its
        // producer removed that name meanwhile): no delivery; whether its bytes were owed is `noFileLost`'s.
        if status.size != m.size || status.mtimeText != m.mtime { return }
        if profile.afterSend == .delete && (profile.onSent == nil || Self.finishedRuns(m, "on_sent") > 0) { return }
        if profile.keepSent > 0 && clock.latestWall.timeIntervalSince(record.mtime) > profile.keepSent { return }
        // A pass weighs sent/ as it was when it listed it: what left it since still counted.
        if profile.keepSentBytes > 0 && sentBytes() + sentMovedOutSinceListing > profile.keepSentBytes { return }
        let age = LogNumbers.fixed(clock.now.timeIntervalSince(record.mtime), places: 1)
        fail(.sentRemovedOnlyAsAllowed, "\(file) removed from sent/, its record \(age) s old, sent/ holding \(sentBytes()) B "
             + "(after_send = \(profile.afterSend.rawValue), keep_sent = \(profile.keepSent) s, keep_sent_bytes = \(profile.keepSentBytes))")
    }

    /// The daemon lists a directory: a listing of sent/ from its top begins a retention pass,
    /// which weighs sent/ as it is from here on.
    func daemonLists(_ path: RelativePath, in directory: String) {
        guard directory == profile.spool.sent, path.bytes.isEmpty else { return }
        sentMovedOutSinceListing = 0
        sentManifestsUnlinked = [:]
    }

    /// What sent/ holds, files and manifests, as retention counts it.
    private func sentBytes() -> Int64 {
        var total: Int64 = 0
        var pending = [profile.spool.sent]
        while let directory = pending.popLast() {
            for name in disk.names(in: directory) where !name.hasPrefix(".") {
                let path = directory + "/" + name
                guard let status = disk.inspect(path) else { continue }
                if status.kind == .directory { pending.append(path) } else { total += status.size }
            }
        }
        return total
    }

    /// A request leaves for the server: the upload it belongs to was ordered inside an upload
    /// window (uploads in flight when a window closes may go on).
    func checkWindowAtRequest() {
        let windows = profile.uploadWindows
        guard violation == nil, !windows.isAlways, let ordered = process.scheduler.jobOrderedAt,
              !windows.phase(at: ordered, in: .gmt).open else { return }
        fail(.uploadsWithinWindows, "a request left for an upload ordered at \(Timestamp.format(ordered)), outside every window (\(windows))")
    }
}
