import Foundation
import UploaderSupport
import UploaderConfig

/// `keep_sent` (age) and `keep_sent_bytes` (size, oldest first): deletes files and their manifests
/// from sent/.
///
/// Age and order are the manifest's modification time: when the file was recorded as sent (or its
/// hook's run last recorded). A file without a manifest in sent/ is left alone (not ours to judge),
/// and so is one whose hook is still due (its marker is in `.hooks-due/`). The size counted is each
/// file's plus its manifest's.
///
/// A deletion removes the file, makes that durable (fsync of its directory), then removes the
/// manifest: whatever a power cut keeps, a file never stays without its manifest (which no pass
/// would judge again). A manifest left alone by a cut between the two is a deletion to finish: the
/// next pass makes the file's absence durable (a kill -9 may have come before that fsync) and
/// removes it, whatever the bounds (a move into sent/ links the file before its manifest,
/// so no other manifest there is without its file).
///
/// sent/ may hold a million files, so a pass reads it as a stream — readdir one entry at a time and
/// an lstat of each manifest and its file — and never holds its listing. The age bound needs
/// nothing more. The size bound needs the total and the oldest files: a pass keeps the `window`
/// oldest it has met in a bounded heap (`OldestSentFiles`) and deletes from those, oldest first,
/// until sent/ fits; when more must go than one window holds, it walks again. Memory stays flat
/// (`window` entries, whatever sent/ holds); the price is a whole walk per pass — about a second per
/// million files on this project's test machine, off the upload path — and, for a bound lowered
/// far below what sent/ holds, one more walk per `window` files to delete. An ordered index of
/// sent/ kept on disk would make a pass cheaper, but only if it were as durable as sent/ itself (a
/// lost line is a file never pruned): an fsync with every move, on the path each upload waits on.
/// The walk is also right about files removed or added by hand, and about spools older than any index.
package struct Retention: Sendable {
    package let spool: Spool
    private var fs: any SpoolFileSystem { spool.fs }
    package let keep: TimeInterval
    package let keepBytes: Int64
    package let logger: Logger
    /// How many of the oldest files a pass remembers for `keep_sent_bytes`.
    let window: Int

    package init(spool: Spool, keep: TimeInterval, keepBytes: Int64 = 0, logger: Logger, window: Int = 16_384) {
        self.spool = spool
        self.keep = keep
        self.keepBytes = keepBytes
        self.logger = logger
        self.window = window
    }

    /// True when there is anything to enforce.
    package var enabled: Bool { keep > 0 || keepBytes > 0 }

    /// How often the daemon passes over sent/: a tenth of `keep_sent` (1 s to 1 h), and at least
    /// every 10 minutes with `keep_sent_bytes` (sooner when deliveries add a tenth of it: the core
    /// times the passes, `RetentionPacing`).
    package var interval: TimeInterval { Self.interval(keep: keep, keepBytes: keepBytes) }

    package static func interval(keep: TimeInterval, keepBytes: Int64) -> TimeInterval {
        var every: TimeInterval = keepBytes > 0 ? 600 : 3600
        if keep > 0 { every = min(every, max(1, keep / 10)) }
        return every
    }

    /// One sweep: removes what is older than `keep` and, oldest first, what is beyond `keepBytes`;
    /// returns how many files it deleted.
    @discardableResult
    package func sweep(now: Date) -> Int {
        guard enabled else { return 0 }
        var removed = 0
        var passes = 0
        while true {
            let pass = onePass(now: now)
            removed += pass.removed
            passes += 1
            guard pass.more && pass.removed > 0 else { break }
        }
        if removed > 0 {
            logger.info("retention: deleted old files from sent/", ["profile": spool.paths.sent, "files": String(removed),
                                                                   "passes": String(passes)])
        }
        return removed
    }

    /// One walk of sent/. `more`: files beyond the size bound remain that this walk's window did not hold.
    private func onePass(now: Date) -> (removed: Int, more: Bool) {
        let sent = spool.directory(.sent)
        var oldest = OldestSentFiles(capacity: window)
        var total: Int64 = 0
        var removed = 0
        walk { manifest in
            let record: FileSystem.Status
            do {
                guard let found = try fs.statusIfPresent(manifest, in: sent) else { return }  // gone meanwhile
                record = found
            } catch {
                // Kept, and weighed by no bound: said at each pass, as it stays until it can be read.
                logger.warn("retention: cannot look at a manifest in sent/; its file is kept", ["file": manifest.displayed(in: sent),
                                                                                                "error": "\(error)"])
                return
            }
            let file = Spool.fileName(forManifest: manifest)
            if !fs.exists(file, in: sent) {
                // A deletion cut after its file had gone.
                if delete(file) { removed += 1 }
                return
            }
            if keep > 0 && now.timeIntervalSince(record.mtime) > keep {
                if delete(file) { removed += 1 }
                return
            }
            guard keepBytes > 0 else { return }
            // A hint: a file gone (or unreadable) beside its manifest weighs nothing; the manifest counts.
            let bytes = record.size + ((try? fs.status(file, in: sent))?.size ?? 0)
            total += bytes
            oldest.offer(OldestSentFiles.Candidate(mtimeNanos: record.mtimeNanos, manifest: manifest, bytes: bytes))
        }
        guard keepBytes > 0, total > keepBytes else { return (removed, false) }
        var excess = total - keepBytes
        for candidate in oldest.oldestFirst() where excess > 0 {
            if delete(Spool.fileName(forManifest: candidate.manifest)) {
                excess -= candidate.bytes
                removed += 1
            }
        }
        return (removed, excess > 0 && oldest.overflowed)
    }

    /// Calls `visit` with the path of each manifest in sent/ (and its subdirectories), reading each
    /// directory as a stream; subdirectories are walked after the directory that holds them.
    private func walk(_ visit: (RelativePath) -> Void) {
        let sent = spool.directory(.sent)
        let unlistable = DirectoryWalker.warning(logger)
        var pending = [RelativePath(bytes: [])]
        while let directory = pending.popLast() {
            do {
                try fs.forEachEntry(directory, in: sent) { entry in
                    guard entry.name.bytes.first != UInt8(ascii: ".") else { return }
                    let path = directory.appending(entry.name)
                    // A hint: a name gone since the listing has no kind: not walked into, and a
                    // manifest's visit finds it gone.
                    let kind = entry.kind ?? (try? fs.status(path, in: sent))?.kind
                    if kind == .directory {
                        pending.append(path)
                    } else if Spool.isManifestName(entry.name) {
                        visit(path)
                    }
                }
            } catch let error as SystemError {
                unlistable(error)
            } catch {
                unlistable(SystemError("readdir", path: directory.displayed(in: sent), code: .io))
            }
        }
    }

    /// How the file at `file` in sent/ differs from its record (size, mtime), or nil: the same, or
    /// no file to compare.
    private func differs(_ file: RelativePath, from record: Manifest) -> String? {
        let now: FileSystem.Status
        do {
            guard let found = try fs.statusIfPresent(file, in: spool.directory(.sent)) else { return nil }
            now = found
        } catch {
            return nil  // the deletion that follows meets the same error and says so
        }
        if now.size != record.size { return "size \(record.size) → \(now.size)" }
        if now.mtimeText != record.mtime { return "mtime \(record.mtime) → \(now.mtimeText)" }
        return nil
    }

    /// Whether the move that filed `file` is still to be finished: its record is still in the
    /// outbox, naming this place. The names here are that move's (a crash cut it after its links),
    /// and the claim that finishes it may be linking them again right now.
    private func moveUnfinished(_ record: Manifest, at file: RelativePath) -> Bool {
        guard case .success(let inOutbox) = spool.readManifest(for: record.outboxPath, in: .outbox), inOutbox.id == record.id,
              let stored = inOutbox.storedAs, let (area, target) = spool.resolveStoredAs(stored) else { return false }
        return area == .sent && target == file
    }

    /// Deletes `file` and then its manifest from sent/, unless its hook is still due, its move is
    /// unfinished, or it is not what was sent; true when done.
    private func delete(_ file: RelativePath) -> Bool {
        let sent = spool.directory(.sent)
        let marker = HookLedger.Marker(area: .sent, path: file, hook: "on_sent")
        if fs.exists(marker.name, in: spool.paths.hooksDue) { return false }
        if case .success(let record) = spool.readManifest(for: file, in: .sent) {
            if let differs = differs(file, from: record) {
                // Not the bytes that were sent (a power cut brought back an older version of a file its
                // producer rewrote in place and never fsynced): kept, as the only copy there is.
                logger.warn("retention: a file in sent/ is not what was sent; it is kept", ["file": file.displayed(in: sent), "change": differs])
                return false
            }
            if moveUnfinished(record, at: file) { return false }
        }
        do {
            if fs.exists(file, in: sent) { try fs.unlink(file, in: sent) }
            // The file's absence durable before its manifest goes, also when an earlier pass
            // removed it and was killed before this fsync (a deletion to finish).
            try spool.syncDirectory(of: file, in: .sent)
            try fs.unlink(Spool.manifestName(for: file), in: sent)
            return true
        } catch {
            logger.warn("retention: cannot delete", ["file": file.displayed(in: sent), "error": "\(error)"])
            return false
        }
    }
}
