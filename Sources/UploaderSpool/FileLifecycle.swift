import Foundation
import UploaderSupport
import UploaderConfig

/// The one state machine of a file — `queued → uploading → sent | retry | failed` — and the
/// durable order of the writes behind each transition.
///
/// Every manifest write is: temporary file, write, fsync, rename over the old manifest.
/// The order below is what makes a crash (kill -9 or power cut) between any two steps
/// recoverable by `Recovery` at the next start, with nothing lost:
///
/// Start of an attempt (claim):
///  1. manifest `uploading` with a new attempt → outbox/NAME.manifest.json (fsynced).
///     Crash after 1: recovery marks that attempt `interrupted` and re-queues the file.
///     Only after 1 is a request sent. Should a power cut undo the rename of 1, the file is
///     claimed afresh under the same id: ids are derived from the file (`ManifestID`).
/// Finish (2xx → sent/, otherwise → retry/ with state `retry` or `failed`):
///  2. manifest with the final state and `stored_as` (the free name in sent/ or retry/),
///     rewritten in the outbox (fsynced).
///     Crash after 2: outbox holds the file and a manifest in a final state → recovery
///     finishes the move (the file is not uploaded again).
///  3. rename outbox/NAME → sent/NAME' (RENAME_NOREPLACE: never overwrites).
///     Crash after 3: outbox holds a manifest whose file is gone, and `stored_as` exists →
///     recovery moves the manifest after it.
///  4. rename outbox/NAME.manifest.json → sent/NAME'.manifest.json.
///  5. fsync sent/, then fsync outbox/: the two renames are durable. A power cut before 5
///     can only undo whole renames (journalled), which lands in one of the states above.
/// Back from retry/ (due, or `uploader retry`):
///  6. manifest `queued` rewritten in retry/ (fsynced); a crash here leaves a `queued`
///     manifest in retry/, which recovery moves on to the outbox.
///  7. rename the manifest retry/ → outbox/, then the file (free names chosen first).
///     Crash between: outbox holds a `queued` manifest without its file, and `stored_as`
///     names the file in retry/ → recovery moves the file after it.
///  8. fsync outbox/ and retry/.
package struct FileLifecycle: Sendable {
    package let spool: Spool
    private var fs: any SpoolFileSystem { spool.fs }
    package let logger: Logger

    package init(spool: Spool, logger: Logger) {
        self.spool = spool
        self.logger = logger
    }

    /// Step 1: records the start of an attempt. An attempt left open by a crash is closed as interrupted.
    package func beginAttempt(_ file: ClaimedFile, now: Date) throws {
        var manifest = file.manifest
        manifest.closeOpenAttempt(at: now, interrupted: true)
        manifest.state = .uploading
        manifest.nextAttemptAt = nil
        manifest.attempts.append(Manifest.Attempt(startedAt: Timestamp.format(now)))
        // No directory fsync: if a power cut undoes this rename, the file is claimed again
        // under the same id (`ManifestID` derives it from the file), so the Idempotency-Key
        // of a request already sent is the same as the one sent again.
        try spool.writeManifest(manifest, for: file.path, in: .outbox)
        file.manifest = manifest
    }

    /// Steps 2–5: moves the file and its manifest to sent/ or retry/ with `manifest` as final record.
    /// Returns the path it now has inside that area.
    @discardableResult
    /// `unchanged` is asked once the file has left the outbox: a change it reports (a producer
    /// wrote to the file between the last check and the move) puts the file back in the outbox
    /// under its name and throws `ChangedDuringMove`, so content never sent is never filed as sent.
    package func finish(_ path: RelativePath, manifest original: Manifest, to area: Spool.Area,
                        unchanged: (() -> String?)? = nil) throws -> RelativePath {
        precondition(area != .outbox)
        let target = spool.freeName(for: path, in: area)
        var manifest = original
        manifest.storedAs = spool.storedAs(target, in: area)
        try spool.writeManifest(manifest, for: path, in: .outbox)
        try completeMove(path, manifest: manifest, to: area, as: target, unchanged: unchanged)
        return target
    }

    /// The file changed between the last check and its move; it is back in the outbox.
    package struct ChangedDuringMove: Error, CustomStringConvertible {
        package var change: String
        package var description: String { "file changed during its move (\(change))" }
    }

    /// Steps 3–5 alone, for recovery of a manifest already in its final state.
    package func completeMove(_ path: RelativePath, manifest: Manifest, to area: Spool.Area, as target: RelativePath,
                              unchanged: (() -> String?)? = nil) throws {
        let outbox = spool.directory(.outbox)
        let dest = spool.directory(area)
        try fs.makeParents(of: target, in: dest)
        if fs.exists(path, in: outbox) {
            try fs.rename(path, in: outbox, to: target, in: dest, replace: false)
            if let change = unchanged?() {
                // Out of the producer's reach now, so this answer is final: put it back.
                try fs.rename(target, in: dest, to: spool.freeName(for: path, in: .outbox), in: outbox, replace: false)
                throw ChangedDuringMove(change: change)
            }
        } else if unchanged != nil {
            // A live move (not recovery's) whose file the producer took away after the upload.
            throw ChangedDuringMove(change: "removed from the outbox")
        }
        try fs.rename(Spool.manifestName(for: path), in: outbox, to: Spool.manifestName(for: target), in: dest, replace: false)
        try spool.syncDirectory(of: target, in: area)
        try spool.syncDirectory(of: path, in: .outbox)
    }

    /// Steps 6–8: puts a file from retry/ back into the outbox as `queued`.
    /// `resetBackoff` (for `uploader retry`) starts the attempt count and the backoff afresh; the history stays.
    @discardableResult
    package func moveBack(fromRetry path: RelativePath, resetBackoff: Bool) throws -> RelativePath {
        let retryDir = spool.directory(.retry)
        let outbox = spool.directory(.outbox)
        guard case .success(var manifest) = spool.readManifest(for: path, in: .retry) else {
            throw SystemError("read manifest", path: Spool.manifestName(for: path).displayed(in: retryDir), code: ENOENT)
        }
        let target = spool.freeName(for: path, in: .outbox)
        manifest.state = .queued
        manifest.nextAttemptAt = nil
        manifest.storedAs = spool.storedAs(path, in: .retry)
        if resetBackoff { manifest.attemptsBeforeRetry = manifest.attempts.count }
        try spool.writeManifest(manifest, for: path, in: .retry)
        try fs.makeParents(of: target, in: outbox)
        try fs.rename(Spool.manifestName(for: path), in: retryDir, to: Spool.manifestName(for: target), in: outbox, replace: false)
        try fs.rename(path, in: retryDir, to: target, in: outbox, replace: false)
        try spool.syncDirectory(of: target, in: .outbox)
        try spool.syncDirectory(of: path, in: .retry)
        return target
    }
}

extension Manifest {
    /// Gives an attempt that has no end (cut by a crash or our shutdown) its end, marked interrupted.
    package mutating func closeOpenAttempt(at date: Date, interrupted: Bool) {
        guard let index = attempts.indices.last, attempts[index].endedAt == nil else { return }
        attempts[index].endedAt = Timestamp.format(date)
        if interrupted { attempts[index].interrupted = true }
    }
}
