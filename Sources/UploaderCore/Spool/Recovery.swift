import Foundation

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
    package let lifecycle: FileLifecycle
    package let ignore: IgnoreRules
    package let recursive: Bool
    package let logger: Logger

    package init(spool: Spool, lifecycle: FileLifecycle, ignore: IgnoreRules, recursive: Bool, logger: Logger) {
        self.spool = spool
        self.lifecycle = lifecycle
        self.ignore = ignore
        self.recursive = recursive
        self.logger = logger
    }

    package struct Result: Sendable {
        package var files: [RelativePath] = []
        package var directoriesIgnored: [RelativePath] = []
    }

    /// Scans `directory` (the outbox root by default) and returns what to queue.
    package func scanOutbox(_ directory: RelativePath = RelativePath(bytes: [])) -> Result {
        var result = Result()
        scan(directory, into: &result)
        return result
    }

    private func scan(_ directory: RelativePath, into result: inout Result) {
        let outbox = spool.directory(.outbox)
        let listing: [FileSystem.Entry]
        do {
            listing = try FileSystem.list(directory, in: outbox)
        } catch {
            logger.error("cannot list outbox", ["dir": directory.displayed(in: outbox), "error": "\(error)"])
            return
        }
        var files = Set<RelativePath>()
        var manifests: [RelativePath] = []
        for entry in listing {
            let path = directory.appending(entry.name)
            if entry.name.bytes.starts(with: Array(".upl-tmp-".utf8)) {
                try? FileSystem.unlink(path, in: outbox)
                logger.info("removed a half-written temporary manifest", ["file": path.logSafe])
                continue
            }
            if directory.bytes.isEmpty && entry.name == RelativePath(".upl-tmp") {
                removeLeftoverTemporaries()
                continue
            }
            if entry.name.bytes.first == UInt8(ascii: ".") { continue }
            if Spool.isManifestName(entry.name) { manifests.append(path); continue }
            let kind = entry.kind ?? (try? FileSystem.status(path, in: outbox))?.kind
            if kind == .directory {
                if recursive { scan(path, into: &result) } else { result.directoriesIgnored.append(path) }
                continue
            }
            files.insert(path)
        }
        for manifestName in manifests {
            let file = Spool.fileName(forManifest: manifestName)
            if files.contains(file) { continue }
            if let brought = resolveOrphan(file) { files.insert(brought) }
        }
        result.files.append(contentsOf: files.filter { !ignore.ignores($0) }.sorted())
    }

    /// Removes half-written manifests left in the outbox's temporary directory by a crash.
    private func removeLeftoverTemporaries() {
        let dir = spool.paths.outboxTemporary
        guard let entries = try? FileSystem.list(dir) else { return }
        for entry in entries where entry.name.bytes.starts(with: Array(".upl-tmp-".utf8)) {
            try? FileSystem.unlink(entry.name, in: dir)
            logger.info("removed a half-written temporary manifest", ["file": entry.name.logSafe])
        }
    }

    /// A manifest in the outbox whose file is not there. Returns the file's path if it was brought back.
    private func resolveOrphan(_ file: RelativePath) -> RelativePath? {
        switch spool.readManifest(for: file, in: .outbox) {
        case .failure(.missing):
            return nil
        case .failure(let problem):
            // Not a manifest we could have written (ours are renamed into place whole): a file
            // that merely ends in `.manifest.json`. Such names are ignored, so it stays put.
            logger.debug("ignored: a name ending in .manifest.json that is no manifest, with no file beside it",
                         ["file": Spool.manifestName(for: file).logSafe, "error": "\(problem)"])
            return nil
        case .success(let manifest):
            guard let stored = manifest.storedAs, let (area, target) = spool.resolveStoredAs(stored),
                  area != .outbox, FileSystem.exists(target, in: spool.directory(area)) else {
                quarantine(file, because: "manifest with no file (the file vanished)")
                return nil
            }
            let dir = spool.directory(area)
            do {
                switch manifest.state {
                case .sent, .retry, .failed:
                    // Step 3 happened, step 4 did not: the manifest follows its file.
                    if FileSystem.exists(Spool.manifestName(for: target), in: dir) {
                        quarantine(file, because: "duplicate manifest; \(stored) already has one")
                        return nil
                    }
                    try lifecycle.completeMove(file, manifest: manifest, to: area, as: target)
                    logger.info("paired a moved file with its manifest", ["file": file.logSafe, "stored_as": stored])
                    return nil
                case .queued, .uploading:
                    // Step 7 was cut between the two renames: the file follows its manifest.
                    try FileSystem.rename(target, in: dir, to: file, in: spool.directory(.outbox), replace: false)
                    try FileSystem.syncDirectoryOf(file, in: spool.directory(.outbox))
                    logger.info("brought a file back from \(area.rawValue)/ to its manifest", ["file": file.logSafe])
                    return file
                }
            } catch {
                logger.error("cannot finish an interrupted move", ["file": file.logSafe, "error": "\(error)"])
                return nil
            }
        }
    }

    private func quarantine(_ file: RelativePath, because reason: String) {
        do {
            let aside = try spool.quarantineManifest(for: file, in: .outbox)
            logger.warn("\(reason); manifest moved aside", ["file": file.logSafe, "manifest": aside])
        } catch {
            logger.error("\(reason); cannot move it aside", ["file": file.logSafe, "error": "\(error)"])
        }
    }

    /// Finds manifests in retry/: `queued` ones (a cut move back) are moved on to the outbox
    /// and returned in `requeued`; `retry` ones are returned with when they are due.
    package func scanRetry() -> (due: [(path: RelativePath, at: Date)], requeued: [RelativePath]) {
        var due: [(RelativePath, Date)] = []
        var requeued: [RelativePath] = []
        walk(spool.directory(.retry), RelativePath(bytes: [])) { manifestName in
            let file = Spool.fileName(forManifest: manifestName)
            guard case .success(let manifest) = spool.readManifest(for: file, in: .retry) else { return }
            switch manifest.state {
            case .retry:
                due.append((file, manifest.nextAttemptAt.flatMap(Timestamp.parse) ?? Date()))
            case .queued, .uploading:
                if let back = try? lifecycle.moveBack(fromRetry: file, resetBackoff: false) { requeued.append(back) }
            case .sent, .failed:
                break
            }
        }
        return (due, requeued)
    }

    /// Calls `body` with every manifest name under `root`/`directory`.
    private func walk(_ root: String, _ directory: RelativePath, _ body: (RelativePath) -> Void) {
        guard let listing = try? FileSystem.list(directory, in: root) else { return }
        for entry in listing where entry.name.bytes.first != UInt8(ascii: ".") {
            let path = directory.appending(entry.name)
            if Spool.isManifestName(entry.name) { body(path); continue }
            if entry.kind == .directory { walk(root, path, body) }
        }
    }
}
