import Foundation
import Synchronization
import UploaderSupport
import UploaderDecisions
import UploaderConfig

/// One profile's spool on disk: its directories, manifest names, and free-name picking.
package struct Spool: Sendable {
    package static let manifestSuffix = SpoolPlace.recordSuffix

    /// The three directories a file can sit in (`SpoolArea`, a value the core decides with).
    package typealias Area = SpoolArea

    package let paths: SpoolPaths
    /// Every file-system call of the spool's code goes through this (the kernel, or a simulated disk).
    package let fs: any SpoolFileSystem
    /// Shared by every copy of this spool, so concurrent workers share directory fsyncs.
    package let syncer: any DirectorySyncing

    /// Numbers the temporary names of manifest writes.
    package let temporaries: TemporaryNames
    /// The deliveries of the last 24 h, shared by every copy of this spool (appends are serialized).
    package let sentLedger: SentLedger

    /// `scheduler` runs the waits of threads sharing the spool: for a directory fsync, for the ledger.
    package init(paths: SpoolPaths, fs: any SpoolFileSystem = LocalFileSystem(), syncer: (any DirectorySyncing)? = nil,
                 temporaries: TemporaryNames = TemporaryNames(), scheduler: any Scheduler = .system) {
        self.paths = paths
        self.fs = fs
        self.temporaries = temporaries
        self.syncer = syncer ?? DirectorySyncer(fs: fs, scheduler: scheduler)
        sentLedger = SentLedger(fs: fs, directory: paths.root, scheduler: scheduler)
    }

    package func directory(_ area: Area) -> String {
        switch area {
        case .outbox: return paths.outbox
        case .sent: return paths.sent
        case .retry: return paths.retry
        }
    }

    /// Creates the spool's directories (mode 0750) if missing. A refused write (a read-only
    /// file system, as outside a systemd unit's `ReadWritePaths=`) throws `WriteRefused`.
    package func prepare() throws {
        for dir in [paths.root, paths.outbox, paths.outboxTemporary, paths.sent, paths.retry] {
            do {
                try fs.makeDirectories(dir)
            } catch {
                throw WriteRefused.hinting(error, directory: writableDirectory(holding: dir))
            }
        }
    }

    /// The configured directory that holds `path` (the spool root, or an outbox, sent/ or
    /// retry/ set elsewhere): the one to name when a write there is refused.
    package func writableDirectory(holding path: String) -> String {
        for dir in [paths.root, paths.outbox, paths.sent, paths.retry] where path == dir || path.hasPrefix(dir + "/") {
            return dir
        }
        return path
    }

    package static func manifestName(for path: RelativePath) -> RelativePath {
        path.appendingSuffix(manifestSuffix)
    }

    package static func isManifestName(_ name: RelativePath) -> Bool {
        name.bytes.count > manifestSuffix.utf8.count && name.bytes.suffix(manifestSuffix.utf8.count).elementsEqual(manifestSuffix.utf8)
    }

    /// The file a manifest name belongs to (`a.txt.manifest.json` → `a.txt`).
    package static func fileName(forManifest name: RelativePath) -> RelativePath {
        RelativePath(bytes: Array(name.bytes.dropLast(manifestSuffix.utf8.count)))
    }

    /// True when the sidecar of this name would not fit in a 255-byte file name.
    package static func sidecarTooLong(_ path: RelativePath) -> Bool {
        path.name.bytes.count + manifestSuffix.utf8.count > 255
    }

    /// `stored_as`: the path relative to the spool root (`sent/report.2.pdf`).
    package func storedAs(_ path: RelativePath, in area: Area) -> String {
        storedAsNaming.storedAs(SpoolPlace(area, path))
    }

    /// How `stored_as` names the places of this spool (each area's directory below the root).
    package var storedAsNaming: StoredAsNaming {
        var prefixes: [Area: String] = [:]
        for area in [Area.outbox, .sent, .retry] {
            let dir = directory(area)
            prefixes[area] = (dir.hasPrefix(paths.root + "/") ? String(dir.dropFirst(paths.root.count + 1)) : dir) + "/"
        }
        return StoredAsNaming(prefixes: prefixes)
    }

    /// Resolves a `stored_as` value back to (area, path), if it names a place inside one of our areas.
    ///
    /// A manifest in the outbox may have been written by anyone who can write there, so a
    /// `stored_as` that climbs out (`sent/../../etc/cron.d/x`) resolves to nothing: recovery
    /// must never rename a file to, or fetch one from, outside the spool.
    package func resolveStoredAs(_ storedAs: String, exactPath: RelativePath? = nil) -> (Area, RelativePath)? {
        guard let place = storedAsNaming.place(storedAs) else { return nil }
        guard let exactPath else { return (place.area, place.path) }
        return StoredAsNaming.staysInside(exactPath) ? (place.area, exactPath) : nil
    }

    /// True for a non-empty relative path with no `.` or `..` component and no empty one.
    package static func staysInside(_ path: RelativePath) -> Bool { StoredAsNaming.staysInside(path) }

    // MARK: Manifests

    package enum ManifestReadError: Error, CustomStringConvertible {
        case missing
        case unreadable(SystemError)
        case corrupt(String)

        /// As a log line's `error` says it: the disk's error, or why the bytes are no manifest.
        package var description: String {
            switch self {
            case .missing: "no manifest"
            case .unreadable(let error): "\(error)"
            case .corrupt(let reason): reason
            }
        }
    }

    package func readManifest(for path: RelativePath, in area: Area) -> Result<Manifest, ManifestReadError> {
        let name = Spool.manifestName(for: path)
        let bytes: [UInt8]
        do {
            bytes = try fs.readAll(name, in: directory(area))
        } catch let error as SystemError {
            return .failure(error.isNotFound ? .missing : .unreadable(error))
        } catch {
            return .failure(.corrupt("\(error)"))
        }
        do {
            return .success(try Manifest.decode(Data(bytes)))
        } catch {
            return .failure(.corrupt(bytes.isEmpty ? "empty file" : "not a valid manifest"))
        }
    }

    /// Whether the outbox record of `path` still reads as `manifest`: a move that read it, then
    /// waited for the retry-move lock, asks again under the lock (`uploader retry` may have moved
    /// the file back meanwhile, and the move that record named is then over).
    package func outboxRecordStill(_ manifest: Manifest, of path: RelativePath) -> Bool {
        guard case .success(let now) = readManifest(for: path, in: .outbox) else { return false }
        return now == manifest
    }

    /// Writes the manifest beside `path` atomically: a temporary file (in the outbox's hidden
    /// `.upl-tmp/`, so the watcher sees one rename, or beside the manifest in retry/), written
    /// and fsynced, then renamed over the manifest — its content is durable before its name is.
    /// A manifest in sent/ (a hook's run recorded) is written through the outbox's `.upl-tmp/`
    /// too (same file system): start-up never reads sent/, but it clears `.upl-tmp/`.
    /// With `syncDirectory` the rename is made durable too (a shared directory fsync).
    package func writeManifest(_ manifest: Manifest, for path: RelativePath, in area: Area, syncDirectory: Bool = false) throws {
        let written = try prepareManifest(manifest, for: path, in: area)
        try commit(written)
        if syncDirectory { try syncer.syncDirectory(of: written.name, in: directory(area)) }
    }

    /// A manifest written and fsynced under a temporary name, not yet renamed into place.
    package struct PreparedManifest: Sendable {
        package let manifest: Manifest
        fileprivate let name: RelativePath
        fileprivate let area: Area
        fileprivate let temporaryDirectory: String
        fileprivate let temporary: RelativePath
    }

    /// The first half of `writeManifest`: the content, durable under a temporary name. Nothing
    /// reads it until `commit` renames it over the manifest; `discard` removes it.
    package func prepareManifest(_ manifest: Manifest, for path: RelativePath, in area: Area) throws -> PreparedManifest {
        let name = Spool.manifestName(for: path)
        let (temporaryDirectory, temporary) = try createTemporary(try manifest.encodedLine(), beside: name, in: area)
        return PreparedManifest(manifest: manifest, name: name, area: area, temporaryDirectory: temporaryDirectory, temporary: temporary)
    }

    /// `prepareManifest` of several records of the outbox at once: their temporaries are written,
    /// then fsynced together (`SpoolFileSystem.createFiles`), so that they share journal commits.
    /// Each answers on its own, in order; one whose temporary could not be made so is tried again
    /// alone (a name taken, the hidden directory gone).
    package func prepareManifests(_ records: [(manifest: Manifest, path: RelativePath)]) -> [Result<PreparedManifest, any Error>] {
        let directory = paths.outboxTemporary
        var results: [Result<PreparedManifest, any Error>] = []
        var files: [NewFile] = []
        var written: [Int] = []
        for (index, record) in records.enumerated() {
            do {
                let line = try record.manifest.encodedLine()
                let temporary = RelativePath(TemporaryNames.prefix + temporaries.next())
                results.append(.success(PreparedManifest(manifest: record.manifest, name: Spool.manifestName(for: record.path),
                                                         area: .outbox, temporaryDirectory: directory, temporary: temporary)))
                files.append(NewFile(line, named: temporary, in: directory))
                written.append(index)
            } catch {
                results.append(.failure(error))
            }
        }
        let created = fs.createFiles(files)
        for (file, index) in written.enumerated() {
            guard case .failure(let error) = created[file] else { continue }
            if let left = (error as? SystemError)?.leftBehind { temporaries.noteUnremoved(left, false) }
            results[index] = Result { try prepareManifest(records[index].manifest, for: records[index].path, in: .outbox) }
        }
        return results
    }

    /// The second half: the prepared content replaces the manifest in one rename.
    package func commit(_ prepared: PreparedManifest) throws {
        do {
            try fs.rename(prepared.temporary, in: prepared.temporaryDirectory, to: prepared.name, in: directory(prepared.area), replace: true)
        } catch {
            discard(prepared)
            throw error
        }
        if temporaries.hasUnremoved { removeUnremovedTemporaries() }
    }

    /// The temporaries of `.upl-tmp/` an earlier failure could not remove, tried again once a
    /// manifest write went through (the disk works again): the daemon need not wait for a rescan
    /// or a restart to clear them. One still refused stays noted.
    private func removeUnremovedTemporaries() {
        for path in temporaries.unremovedLeftovers {
            do {
                try fs.unlink(path, in: paths.outboxTemporary)
                temporaries.noteUnremoved(path, true)
            } catch let error as SystemError where error.isNotFound {
                temporaries.noteUnremoved(path, true)
            } catch {
                // Refused again: noted still, said by the next rescan's try.
            }
        }
    }

    /// Removes a prepared manifest that will not be committed (a crash leaves it to start-up's sweep).
    /// One that cannot be removed (an I/O error) is harmless where it is; in the outbox's
    /// `.upl-tmp/` it is noted, so that the running daemon's next scan tries again and says so.
    package func discard(_ prepared: PreparedManifest) {
        do {
            try fs.unlink(prepared.temporary, in: prepared.temporaryDirectory)
        } catch let error as SystemError where error.isNotFound {
            return
        } catch {
            if prepared.temporaryDirectory == paths.outboxTemporary { temporaries.noteUnremoved(prepared.temporary, false) }
        }
    }

    /// Creates a fsynced temporary file holding `data` for the manifest `name` in `area`; returns where.
    private func createTemporary(_ data: [UInt8], beside name: RelativePath, in area: Area) throws -> (String, RelativePath) {
        let inOutbox = area != .retry
        let dir = inOutbox ? paths.outboxTemporary : directory(area)
        for _ in 0..<100 {
            let base = RelativePath(TemporaryNames.prefix + temporaries.next())
            let temporary = inOutbox ? base : (name.parent.map { $0.appending(base) } ?? base)
            do {
                try fs.createFile(data, named: temporary, in: dir, sync: true)
                return (dir, temporary)
            } catch let error as SystemError where error.code == .exists {
                continue
            } catch let error as SystemError where error.isNotFound && inOutbox {
                // The hidden directory went with its outbox (removed and recreated): make it again.
                try fs.makeDirectories(dir)
            } catch let error as SystemError where error.leftBehind != nil && inOutbox {
                temporaries.noteUnremoved(error.leftBehind!, false)
                throw error
            }
        }
        throw SystemError("create", path: name.displayed(in: dir), code: .exists)
    }

    /// Makes renames into the directory holding `path` in `area` durable (shared fsync).
    package func syncDirectory(of path: RelativePath, in area: Area) throws {
        try syncer.syncDirectory(of: path, in: directory(area))
    }

    /// Moves an unreadable manifest aside into `.quarantine/` (never deletes it); returns where it went.
    /// As a move is made: the record's directory fsynced first (a file that left it just before
    /// stays gone), then linked there, `.quarantine/` (and its entry in the spool's root) fsynced,
    /// and only then its old name removed, so no power cut can lose the record — one that cuts the
    /// move, or an fsync or unlink refused on the way, leaves it where it was (the move is tried
    /// again; a refusal after the link removes the new name first).
    @discardableResult
    package func quarantineManifest(for path: RelativePath, in area: Area, now: Date) throws -> String {
        let unsynced = PlantedBug.quarantineUnsynced.isActive
        let record = Spool.manifestName(for: path)
        // What left the record's directory before (its file, in a move back whose fsync failed)
        // is gone durably before the record goes: else a power cut could bring that file back
        // there without its record.
        try syncDirectory(of: record, in: area)
        try fs.makeDirectories(paths.quarantine)
        if !unsynced { try syncer.syncDirectory(of: RelativePath(".quarantine"), in: paths.root) }
        let stamp = Timestamp.format(now).replacingOccurrences(of: ":", with: "")
        let name = RelativePath(bytes: record.name.bytes + Array(".\(stamp)".utf8))
        try fs.link(record, in: directory(area), to: name, in: paths.quarantine)
        do {
            if !unsynced { try syncer.syncDirectory(of: name, in: paths.quarantine) }
        } catch {
            // Undone: the record keeps its one name, and no undurable one is left in `.quarantine/`
            // for a power cut to drop after that name is gone.
            throw SystemError.afterRemoving(name, failed: error, operation: "fsync", path: paths.quarantine) {
                try fs.unlink(name, in: paths.quarantine)
            }
        }
        do {
            try fs.unlink(record, in: directory(area))
        } catch {
            // The record keeps its old name: its new one goes again (durably), so the move can be
            // tried once more under the same name and `.quarantine/` holds no second copy of it.
            // Should the old name be gone after all, or its fate unknown, the new one is all there is.
            let oldNameKept: Bool
            do { oldNameKept = try fs.statusIfPresent(record, in: directory(area)) != nil } catch { oldNameKept = false }
            guard oldNameKept else { throw error }
            throw SystemError.afterRemoving(name, failed: error, operation: "unlink", path: directory(area)) {
                try fs.unlink(name, in: paths.quarantine)
                if !unsynced { try syncer.syncDirectory(of: name, in: paths.quarantine) }
            }
        }
        try syncDirectory(of: record, in: area)
        return name.displayed(in: paths.quarantine)
    }

    // MARK: Names

    package static func numbered(_ path: RelativePath, _ n: Int) -> RelativePath { SpoolPlace.numbered(path, n) }
}

/// Names for the temporary files of manifest writes: `.upl-tmp-` and a number, counted from a
/// random start (two processes writing in one spool — the daemon and `uploader retry` — meet
/// only by chance, and then O_EXCL sends one to the next number). The simulator starts at 0,
/// so its runs replay exactly.
package final class TemporaryNames: Sendable {
    package static let prefix = ".upl-tmp-"
    private let counter: Atomic<UInt64>

    package init(start: UInt64 = UInt64.random(in: 0...(UInt64.max >> 1))) { counter = Atomic(start) }

    package func next() -> String { String(counter.wrappingAdd(1, ordering: .relaxed).newValue, radix: 16) }

    /// Leftovers in `.upl-tmp/` that could not be removed (an I/O error): an earlier process's,
    /// at start-up, or this one's discarded writes. No write uses their names any more, so a scan
    /// of the running daemon, which leaves the directory's other names alone, may try them again.
    private let unremoved = Mutex<Set<RelativePath>>([])

    package func noteUnremoved(_ path: RelativePath, _ removed: Bool) {
        unremoved.withLock { set in
            if removed { set.remove(path) } else { set.insert(path) }
        }
    }

    package var unremovedLeftovers: [RelativePath] { unremoved.withLock { $0.sorted() } }

    /// Whether any leftover waits to be removed again (one lock, on every manifest write).
    package var hasUnremoved: Bool { unremoved.withLock { !$0.isEmpty } }
}
