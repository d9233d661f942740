import Foundation
import UploaderSupport
import UploaderConfig

/// Counts what sits in a spool, by state, from the files and manifests on disk alone —
/// what `status` shows and the metrics file exports. sent/ is never read: `sent24h` comes from
/// the `SentLedger`, so a spool keeping a million sent files counts as fast as an empty one
/// (files put into sent/ by hand are not deliveries, and are not counted).
package struct SpoolCensus: Sendable, Equatable {
    package struct Tally: Sendable, Equatable {
        package var files = 0
        package var bytes: Int64 = 0
        package init(files: Int = 0, bytes: Int64 = 0) {
            self.files = files
            self.bytes = bytes
        }
        mutating func add(_ size: Int64) { files += 1; bytes += size }
    }

    package var queued = Tally()
    package var uploading = Tally()
    package var retry = Tally()
    package var failed = Tally()
    package var sent24h = Tally()
    /// Outbox entries never uploaded: symlinks, FIFOs, sockets, devices, names too long for a sidecar.
    package var refused = Tally()
    package var nextDue: Date?
    /// The mtime of the oldest file waiting in the outbox (not the ones being uploaded); nil when none waits.
    package var oldestQueued: Date?
    package var lastError: String?
    private var lastErrorAt: String = ""
    private var recursive = true

    package init() {}

    /// - Parameters:
    ///   - recursive: whether files in the outbox's subdirectories are queued (else they are not counted).
    ///   - includeSent: false leaves `sent24h` at zero (the daemon's metrics do not export it).
    ///   - unlistable: told about each directory that cannot be listed (its files go uncounted), and
    ///     about a sent ledger that cannot be read.
    package static func take(_ spool: Spool, ignore: IgnoreRules, recursive: Bool = true, now: Date,
                             includeSent: Bool = true, unlistable: @escaping DirectoryWalker.ErrorHandler) -> SpoolCensus {
        var census = SpoolCensus()
        census.recursive = recursive
        for area in [Spool.Area.outbox, .retry] {
            census.walk(spool, area, ignore: ignore, now: now, unlistable: unlistable)
        }
        if includeSent {
            do {
                let recent = try spool.sentLedger.recent(now: now)
                census.sent24h = Tally(files: recent.files, bytes: recent.bytes)
            } catch let error as SystemError {
                unlistable(error)
            } catch {
                unlistable(SystemError("read", path: spool.paths.sentLedger, code: .io))
            }
        }
        return census
    }

    private mutating func walk(_ spool: Spool, _ area: Spool.Area, ignore: IgnoreRules, now: Date,
                               unlistable: @escaping DirectoryWalker.ErrorHandler) {
        let root = spool.directory(area)
        DirectoryWalker(root: root, fs: spool.fs, onError: unlistable).walk { entry in
            if entry.kind == .directory { return area != .outbox || recursive }
            count(entry, in: spool, area, ignore: ignore, now: now)
            return false
        }
    }

    private mutating func count(_ entry: DirectoryWalker.Entry, in spool: Spool, _ area: Spool.Area, ignore: IgnoreRules, now: Date) {
        let root = spool.directory(area)
        let path = entry.path
        switch area {
        case .outbox:
            // A count, not a record: a file gone since the listing (or unreadable) is not counted.
            guard !Spool.isManifestName(entry.name), !ignore.ignores(path),
                  let status = try? spool.fs.status(path, in: root) else { return }
            guard status.kind == .regular, !Spool.sidecarTooLong(path) else {
                refused.add(status.kind == .regular ? status.size : 0)
                return
            }
            var state = Manifest.State.queued
            if spool.fs.exists(Spool.manifestName(for: path), in: root),
               case .success(let manifest) = spool.readManifest(for: path, in: .outbox) {
                state = manifest.state
                note(manifest)
            }
            if state == .uploading {
                uploading.add(status.size)
            } else {
                queued.add(status.size)
                // Only what still waits: a file being uploaded is no longer queued (nor "oldest").
                if oldestQueued.map({ status.mtime < $0 }) ?? true { oldestQueued = status.mtime }
            }
        case .retry:
            guard Spool.isManifestName(entry.name),
                  case .success(let manifest) = spool.readManifest(for: Spool.fileName(forManifest: path), in: .retry) else { return }
            note(manifest)
            if manifest.state == .failed {
                failed.add(manifest.size)
            } else {
                retry.add(manifest.size)
                if let due = manifest.nextAttemptAt.flatMap(Timestamp.parse), nextDue.map({ due < $0 }) ?? true { nextDue = due }
            }
        case .sent:
            preconditionFailure("sent/ is never listed for a census")
        }
    }

    /// Keeps the most recent error among the manifests seen.
    private mutating func note(_ manifest: Manifest) {
        guard let error = manifest.lastError else { return }
        let at = manifest.attempts.last?.endedAt ?? manifest.createdAt
        if at >= lastErrorAt {
            lastErrorAt = at
            lastError = error
        }
    }
}
