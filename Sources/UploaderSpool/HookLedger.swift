import Foundation
import UploaderSupport
import UploaderConfig
import UploaderDecisions

/// The index of hooks due: one small marker per due hook in `<spool>/.hooks-due/`, so start-up
/// finds every hook still to run by listing that directory — never by reading `sent/`, which
/// may keep millions of files. The manifest stays the record; a marker only says where to look.
///
/// A marker is named after the place of the manifest it points to and its hook
/// (`<32 hex digits of SHA-256(area/path)>.on_sent`) and holds that place (`sent\n` and the
/// path's exact bytes). The order of writes, in the discipline of `FileLifecycle`:
///
///  2. the final-state manifest names the hook due (`hooks: [{"name": "on_sent", …null}]`),
///     in the outbox. Crash here: the outbox is scanned whole at every start; recovery
///     finishes the move, and the move writes the marker (next step).
///  3. before the manifest gets its name in sent/ (or retry/), the marker is written —
///     temporary file, fsync, rename, fsync of `.hooks-due/` — so a due manifest in sent/
///     always has a durable marker, whatever a power cut keeps. Then the move's links.
///  a. the run's start is recorded in the manifest (rewritten, fsynced), then the command runs.
///  b. its end and exit status are recorded, and made durable (directory fsync).
///     Crash before b: the marker is still there and the manifest shows no finished run, so
///     start-up runs the hook again (a new entry).
///  c. the marker is removed (no fsync: a marker that comes back points to a finished run, and
///     start-up drops it).
/// Start-up drops markers whose manifest is gone (that absence made durable first), is another
/// file's, or has no hook due: a move cut before its manifest's link is finished by recovery,
/// which writes the marker again.
/// With `after_send = delete` a marker of a file in sent/ also stands for its deletion: it goes
/// only once the file and its manifest have left sent/ after the hook's run (`DueHookRun`), so
/// start-up keeps a marker whose hook has run while the file is still there.
package struct HookLedger: Sendable {
    package let spool: Spool
    private var fs: any SpoolFileSystem { spool.fs }
    private var directory: String { spool.paths.hooksDue }

    package init(spool: Spool) { self.spool = spool }

    /// One marker: the hook `hook` is due for the manifest of `path` in `area`.
    package struct Marker: Sendable, Equatable {
        package var area: Spool.Area
        package var path: RelativePath
        package var hook: String

        package init(area: Spool.Area, path: RelativePath, hook: String) {
            self.area = area
            self.path = path
            self.hook = hook
        }

        /// `<hash of the place>.<hook>`: one name per place and hook, safe whatever the path's bytes.
        var name: RelativePath {
            let place = Array("\(area.rawValue)/".utf8) + path.bytes
            return RelativePath(String(SHA256.hash(place).hexString.prefix(32)) + "." + hook)
        }

        var content: [UInt8] { Array("\(area.rawValue)\n".utf8) + path.bytes }

        init?(name: RelativePath, content: [UInt8]) {
            guard let newline = content.firstIndex(of: 0x0A),
                  let area = Spool.Area(rawValue: String(decoding: content[..<newline], as: UTF8.self)), area != .outbox,
                  let dot = name.bytes.lastIndex(of: UInt8(ascii: ".")) else { return nil }
            let path = RelativePath(bytes: Array(content[(newline + 1)...]))
            guard Spool.staysInside(path) else { return nil }
            self.init(area: area, path: path, hook: String(decoding: name.bytes[(dot + 1)...], as: UTF8.self))
            guard self.name == name else { return nil }
        }
    }

    /// Step 3: a durable marker for the hook `manifest` has due, once it is at `path` in `area`.
    /// Nothing when no hook is due; nothing more when the marker is already there (a move run again).
    package func ensureMarker(for manifest: Manifest, at path: RelativePath, in area: Spool.Area) throws {
        guard let hook = manifest.dueHook else { return }
        let marker = Marker(area: area, path: path, hook: hook)
        if fs.exists(marker.name, in: directory) { return }
        let temporary = RelativePath(TemporaryNames.prefix + spool.temporaries.next())
        do {
            try fs.createFile(marker.content, named: temporary, in: directory, sync: true)
        } catch let error as SystemError where error.isNotFound {
            // The first marker of this spool: its directory.
            try fs.makeDirectories(directory)
            try fs.createFile(marker.content, named: temporary, in: directory, sync: true)
        }
        // The directory's entry in the spool's root, durable before a marker in it counts: once
        // per process, as the process that made the directory may have died before its fsync.
        try spool.syncer.syncOnce(of: RelativePath(".hooks-due"), in: spool.paths.root)
        do {
            try fs.rename(temporary, in: directory, to: marker.name, in: directory, replace: true)
        } catch {
            // The rename's failure is what the caller hears; a temporary whose removal is refused
            // too is said with it, and the next start's `markers` removes it.
            throw SystemError.afterRemoving(temporary, failed: error, operation: "rename", path: temporary.displayed(in: directory)) {
                try fs.unlink(temporary, in: directory)
            }
        }
        try spool.syncer.syncDirectory(of: marker.name, in: directory)
    }

    /// Something start-up could not do with a marker or the markers' directory, for one log line.
    package struct Problem: Sendable, Equatable {
        package var level: LogLevel
        package var what: String
        /// The marker, manifest or directory it is about.
        package var path: String
        /// The failure, with its errno (nil when there is none).
        package var error: String?
    }

    /// Every marker (a listing of `.hooks-due/` and a small read each). Leftover temporaries and
    /// names that are not markers are removed. A marker that cannot be read stays (its hook runs
    /// once it can be, at a later start); so do all of them when the directory cannot be listed.
    /// `problem` hears of each of these.
    func markers(problem: (Problem) -> Void) -> [Marker] {
        let entries: [FileSystem.Entry]
        do {
            entries = try fs.list(RelativePath(bytes: []), in: directory)
        } catch let error as SystemError where error.isNotFound {
            return []  // no hook was ever due in this spool
        } catch {
            problem(Problem(level: .error, what: "cannot list the hooks due; none runs now, and their markers stay for the next start",
                            path: directory, error: "\(error)"))
            return []
        }
        var found: [Marker] = []
        for entry in entries.sorted(by: { $0.name < $1.name }) where entry.kind != .directory {
            let place = entry.name.displayed(in: directory)
            if entry.name.bytes.starts(with: Array(TemporaryNames.prefix.utf8)) {
                // A marker's write cut by a crash: removed; one that cannot be is tried again at the next start.
                do {
                    try fs.unlink(entry.name, in: directory)
                } catch let error as SystemError where error.isNotFound {
                    // Gone already: what was to be done.
                } catch {
                    problem(Problem(level: .warn, what: "cannot remove a marker's leftover temporary file; the next start tries again",
                                    path: place, error: "\(error)"))
                }
                continue
            }
            let content: [UInt8]
            do {
                content = try fs.readAll(entry.name, in: directory)
            } catch let error as SystemError where error.isNotFound {
                continue  // removed since the listing: its run has finished
            } catch {
                // Never removed for this: only a marker read whole may go.
                problem(Problem(level: .error, what: "cannot read a hook marker; it stays, and its hook runs at a start that can read it",
                                path: place, error: "\(error)"))
                continue
            }
            if let marker = Marker(name: entry.name, content: content) {
                found.append(marker)
            } else {
                do {
                    try fs.unlink(entry.name, in: directory)
                    problem(Problem(level: .warn, what: "not a hook marker; removed", path: place, error: nil))
                } catch {
                    problem(Problem(level: .warn, what: "not a hook marker; cannot remove it", path: place, error: "\(error)"))
                }
            }
        }
        return found
    }

    /// Start-up, before any claim: the markers whose manifest has that hook due, or (with
    /// `after_send = delete`) is a delivered file still in sent/ (`HookMarkerFate` judges each).
    /// Markers whose manifest is finished or is another's are removed, and those whose manifest is
    /// gone once that is durable (a move cut before its manifest's link is finished by recovery,
    /// which writes its marker again); `problem` hears of markers that are not ours,
    /// of markers and manifests that cannot be read (those markers stay), and of markers that
    /// cannot be removed.
    package func dueMarkers(afterSend: AfterSend = .keep, problem: (Problem) -> Void) -> [Marker] {
        markers(problem: problem).filter { marker in
            let read = spool.readManifest(for: marker.path, in: marker.area)
            switch HookMarkerFate.judge(hook: marker.hook, area: marker.area, record: read.recordRead,
                                        afterSendDeletes: afterSend == .delete, hookIsDue: Self.isDue) {
            case .run:
                return true
            case .keepUnread:
                let why = if case .failure(let failure) = read { failure.description } else { "" }
                problem(Problem(level: .warn, what: "hook due, but its manifest cannot be read; not run",
                                path: marker.path.displayed(in: spool.directory(marker.area)), error: why))
                return false
            case .dropOnceAbsenceIsDurable:
                do {
                    try spool.syncDirectory(of: Spool.manifestName(for: marker.path), in: marker.area)
                } catch let error as SystemError where error.isNotFound {
                    // Its directory there is gone too: nothing under it to come back.
                } catch {
                    problem(Problem(level: .warn, what: "cannot make the removal of a hook's manifest durable; its marker stays for the next start",
                                    path: marker.path.displayed(in: spool.directory(marker.area)), error: "\(error)"))
                    return false
                }
                drop(marker, problem: problem)
                return false
            case .drop:
                drop(marker, problem: problem)
                return false
            }
        }
    }

    /// Removes a marker start-up found nothing due for; `problem` hears when it cannot.
    private func drop(_ marker: Marker, problem: (Problem) -> Void) {
        do {
            try remove(marker)
        } catch {
            problem(Problem(level: .warn, what: "cannot remove the marker of a hook no longer due; the next start tries again",
                            path: marker.name.displayed(in: directory), error: "\(error)"))
        }
    }

    /// Whether `manifest` has `hook` due: its state's hook, with no end recorded for its last run.
    package static func isDue(_ hook: String, in manifest: Manifest) -> Bool {
        if PlantedBug.hookEndsUnread.isActive { return manifest.hooks?.contains { $0.name == hook } == true }
        return manifest.dueHook == hook
    }

    /// Step c: the hook's finished run is durable in its manifest (or nothing is due any more).
    /// A marker already gone is fine; any other failure is thrown (the marker stays, and the next
    /// start drops it).
    package func remove(_ marker: Marker) throws {
        if PlantedBug.hookEndsUnread.isActive { return }
        do {
            try fs.unlink(marker.name, in: directory)
        } catch let error as SystemError where error.isNotFound {
            return
        }
    }
}
