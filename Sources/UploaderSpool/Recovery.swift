import Foundation
import UploaderSupport
import UploaderDecisions
import UploaderConfig

/// Start-up (and rescan) pass over an outbox: puts every crash state of `FileLifecycle`
/// right and returns the files to queue.
///
/// Handles: leftover temporary manifests (removed; their file is claimed again), manifests
/// whose file already moved (moved after it), `queued` manifests whose file is still in
/// retry/ (file brought back), manifests with no file at all (moved aside to `.quarantine/`
/// with a warning, never deleted). A `.manifest.json` name that does not parse and has no
/// file is not ours (manifests are renamed into place whole): it is left alone, like any ignored name. Files with or without a manifest are returned to be
/// claimed; `Claimer` deals with their manifests (reuse, finish a recorded move, or quarantine).
package struct Recovery: Sendable {
    package let spool: Spool
    private var fs: any SpoolFileSystem { spool.fs }
    package let lifecycle: FileLifecycle
    package let ignore: IgnoreRules
    package let recursive: Bool
    package let logger: Logger
    package let clock: any Clock

    package init(spool: Spool, lifecycle: FileLifecycle, ignore: IgnoreRules, recursive: Bool, logger: Logger,
                 clock: any Clock = SystemClock()) {
        self.spool = spool
        self.clock = clock
        self.lifecycle = lifecycle
        self.ignore = ignore
        self.recursive = recursive
        self.logger = logger
    }

    package struct Result: Sendable {
        package var files: [RelativePath] = []
        package var directoriesIgnored: [RelativePath] = []
        /// Files whose cut move into retry/ this scan finished, and when each is due.
        package var retries: [(path: RelativePath, at: Date)] = []
        /// Where the files whose cut move this scan finished are now (their hooks may be due).
        package var moved: [(area: Spool.Area, path: RelativePath)] = []
    }

    /// Scans `directory` (the outbox root by default) and returns what to queue.
    ///
    /// `atStartUp`: nothing of ours is under way, so what the hidden temporary directory holds is
    /// left over from a crash and goes, and so do adoptions cut short (`FileAdoption`). A rescan
    /// of a running daemon (inotify overflow, `rescan`) leaves both alone: a worker's record
    /// written aside, or a copy about to be swapped in, is there. It leaves alone, too, the record
    /// without its file of a name `held` says a worker holds: a live move between its file's step
    /// and its record's looks just like a cut one, and settling it beside the mover (which may
    /// bring the file back itself) would give one file two outbox names.
    package func scanOutbox(_ directory: RelativePath = RelativePath(bytes: []), atStartUp: Bool = true,
                            held: (RelativePath) -> Bool = { _ in false }) -> Result {
        let outbox = spool.directory(.outbox)
        var result = Result()
        // What each directory being walked holds, settled when the walk leaves it.
        var files: [RelativePath: Set<RelativePath>] = [:]
        var manifests: [RelativePath: [RelativePath]] = [:]
        DirectoryWalker(root: outbox, includeHidden: true, fs: fs, logger: logger).walk(from: directory, visit: { entry in
            let parent = entry.path.parent ?? RelativePath(bytes: [])
            if entry.name.bytes.starts(with: Self.temporaryPrefix) {
                removeTemporary(entry.path, in: outbox)
                return false
            }
            if SpoolPlace.adopted(byLeftover: entry.path) != nil {
                if atStartUp { reconcileAdoption(entry.path) }
                return false
            }
            if entry.path == Self.temporaryDirectory {
                if atStartUp { removeLeftoverTemporaries() } else { retryUnremovedTemporaries() }
                return false
            }
            if entry.name.bytes.first == UInt8(ascii: ".") { return false }
            if Spool.isManifestName(entry.name) { manifests[parent, default: []].append(entry.path); return false }
            if entry.kind == .directory {
                if !recursive { result.directoriesIgnored.append(entry.path) }
                return recursive
            }
            files[parent, default: []].insert(entry.path)
            return false
        }, leave: { dir in
            var here = files.removeValue(forKey: dir) ?? []
            for manifestName in manifests.removeValue(forKey: dir) ?? [] {
                let file = Spool.fileName(forManifest: manifestName)
                if here.contains(file) || (!atStartUp && held(file)) { continue }
                if let brought = resolveOrphan(file, into: &result) { here.insert(brought) }
            }
            result.files.append(contentsOf: here.filter { !ignore.ignores($0) }.sorted())
        })
        return result
    }

    private static let temporaryPrefix = Array(".upl-tmp-".utf8)
    private static let temporaryDirectory = RelativePath(".upl-tmp")

    /// Removes half-written manifests left in the outbox's temporary directory by a crash; those
    /// that cannot be removed are noted for the running daemon's scans (`TemporaryNames`).
    private func removeLeftoverTemporaries() {
        let dir = spool.paths.outboxTemporary
        DirectoryWalker(root: dir, includeHidden: true, fs: fs, logger: logger).walk { entry in
            if entry.name.bytes.starts(with: Self.temporaryPrefix) {
                spool.temporaries.noteUnremoved(entry.path, removeTemporary(entry.path, in: dir))
            }
            return false
        }
    }

    /// The leftovers start-up or a discarded write could not remove, tried again.
    private func retryUnremovedTemporaries() {
        let dir = spool.paths.outboxTemporary
        for path in spool.temporaries.unremovedLeftovers {
            spool.temporaries.noteUnremoved(path, removeTemporary(path, in: dir))
        }
    }

    /// Removes a manifest's write cut by a crash, and says so; one that cannot be removed is
    /// named with the error (it is harmless where it is, and the next scan tries again).
    /// Whether it is gone.
    @discardableResult
    private func removeTemporary(_ path: RelativePath, in directory: String) -> Bool {
        do {
            if !PlantedBug.temporariesKept.isActive { try fs.unlink(path, in: directory) }
            logger.info("removed a half-written temporary manifest", ["file": path.displayed(in: directory)])
            return true
        } catch let error as SystemError where error.isNotFound {
            return true  // gone meanwhile
        } catch {
            logger.warn("cannot remove a half-written temporary manifest", ["file": path.displayed(in: directory), "error": "\(error)"])
            return false
        }
    }

    /// An adoption cut by a crash: settled so that the file's newest bytes keep its name.
    private func reconcileAdoption(_ leftover: RelativePath) {
        do {
            try FileAdoption(lifecycle: lifecycle).reconcileLeftover(leftover)
        } catch {
            logger.warn("cannot settle a copy of another user's file cut short by a crash", ["file": leftover.logSafe, "error": "\(error)"])
        }
    }

    /// A manifest in the outbox whose file is not there, settled by its planner
    /// (`SpoolMoves.settleOrphan`). Returns the file's path if it was brought back.
    private func resolveOrphan(_ file: RelativePath, into result: inout Result) -> RelativePath? {
        switch lifecycle.settleOrphan(file, now: clock.now) {
        case .nothing:
            return nil
        case .broughtBack(let path, let beside):
            if let beside { result.files.append(beside) }
            return path
        case .moved(let place, let manifest):
            result.moved.append((place.area, place.path))
            if manifest.state == .retry {
                result.retries.append((place.path, manifest.nextAttemptAt.flatMap(Timestamp.parse) ?? clock.now))
            }
            return nil
        }
    }

    /// Finds manifests in retry/: `queued` ones (a cut move back) are moved on to the outbox
    /// and returned in `requeued`; `retry` ones are returned with when they are due.
    package func scanRetry() -> (due: [(path: RelativePath, at: Date)], requeued: [RelativePath]) {
        var due: [(RelativePath, Date)] = []
        var requeued: [RelativePath] = []
        DirectoryWalker(root: spool.directory(.retry), includeHidden: true, fs: fs, logger: logger).walk { entry in
            if entry.name.bytes.starts(with: Array(TemporaryNames.prefix.utf8)) {
                // A manifest write in retry/ cut by a crash (a move back, `uploader retry`).
                removeTemporary(entry.path, in: spool.directory(.retry))
                return false
            }
            if entry.name.bytes.first == UInt8(ascii: ".") { return false }
            if entry.kind == .directory { return true }
            guard Spool.isManifestName(entry.name) else { return false }
            let file = Spool.fileName(forManifest: entry.path)
            switch lifecycle.settleRetryRecord(file, now: clock.now) {
            case .due(let at): due.append((file, at.flatMap(Timestamp.parse) ?? clock.now))
            case .movedBack(let path): requeued.append(path)
            case .moveBackDueNow: due.append((file, clock.now))
            case .stays, .settled: break
            }
            return false
        }
        return (due, requeued)
    }
}
