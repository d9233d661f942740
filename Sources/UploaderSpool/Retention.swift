import Foundation
import UploaderSupport
import UploaderConfig
import UploaderDecisions

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
    /// Performs the deletions it plans.
    private let lifecycle: FileLifecycle

    package init(spool: Spool, keep: TimeInterval, keepBytes: Int64 = 0, logger: Logger, window: Int = 16_384) {
        self.spool = spool
        self.keep = keep
        self.keepBytes = keepBytes
        self.logger = logger
        self.window = window
        lifecycle = FileLifecycle(spool: spool, logger: logger)
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

    /// One walk of sent/, deleting what `RetentionPass` chooses. `more`: files beyond the size
    /// bound remain that this walk's window did not hold.
    private func onePass(now: Date) -> (removed: Int, more: Bool) {
        let sent = spool.directory(.sent)
        var pass = RetentionPass(keepBytes: keepBytes, window: window)
        var removed = 0
        let rule = RetentionRule(keep: PlantedBug.keepSentTenth.isActive ? keep / 10 : keep, keepBytes: keepBytes)
        walk { manifest in
            let file = Spool.fileName(forManifest: manifest)
            let judgement: SentJudgement
            do {
                judgement = try lifecycle.plan { disk throws(PlanStop) in try SpoolMoves.judgeSent(file, rule: rule, now: now, on: &disk) }
            } catch {
                // Kept, and weighed by no bound: said at each pass, as it stays until it can be looked at.
                logger.warn("retention: cannot look at a file in sent/; it is kept", ["file": file.displayed(in: sent), "error": "\(error)"])
                return
            }
            if pass.met(manifest, judgement), delete(file) { removed += 1 }
        }
        for candidate in pass.oldestFirst() where pass.beyondBound {
            if delete(Spool.fileName(forManifest: candidate.manifest)) {
                pass.deleted(candidate)
                removed += 1
            }
        }
        return (removed, pass.walkAgain)
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
                    // A name gone since the listing has no kind: not walked into, and a
                    // manifest's visit finds it gone. One that cannot be looked at is said, and
                    // skipped this pass.
                    var kind = entry.kind
                    if kind == nil {
                        do {
                            kind = try fs.status(path, in: sent).kind
                        } catch let error as SystemError where error.isNotFound {
                            // Gone since the listing.
                        } catch {
                            logger.warn("retention: cannot look at an entry in sent/; it is skipped this pass",
                                        ["file": path.displayed(in: sent), "error": "\(error)"])
                            return
                        }
                    }
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

    /// Deletes `file` and then its manifest from sent/ (`SpoolMoves.retire`, which says when not);
    /// true when done.
    private func delete(_ file: RelativePath) -> Bool {
        let naming = spool.storedAsNaming
        do {
            return try lifecycle.plan { disk throws(PlanStop) in try SpoolMoves.retire(file, naming: naming, on: &disk) } == .deleted
        } catch {
            logger.warn("retention: cannot delete", ["file": file.displayed(in: spool.directory(.sent)), "error": "\(error)"])
            return false
        }
    }
}
