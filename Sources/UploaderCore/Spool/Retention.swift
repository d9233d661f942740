import Foundation

/// `keep_sent`: deletes files (and their manifests) in sent/ older than the retention period.
///
/// Age is the manifest's modification time, which is when the file was recorded as sent.
/// A file without a manifest in sent/ is left alone: it is not ours to judge.
package struct Retention: Sendable {
    package let spool: Spool
    package let keep: TimeInterval
    package let logger: Logger

    package init(spool: Spool, keep: TimeInterval, logger: Logger) {
        self.spool = spool
        self.keep = keep
        self.logger = logger
    }

    /// Removes what is older than `keep` at `now`; returns how many files it deleted.
    @discardableResult
    package func sweep(now: Date = Date()) -> Int {
        guard keep > 0 else { return 0 }
        var removed = 0
        sweep(RelativePath(bytes: []), now: now, removed: &removed)
        if removed > 0 {
            logger.info("retention: deleted old files from sent/", ["profile": spool.paths.sent, "files": String(removed)])
        }
        return removed
    }

    private func sweep(_ directory: RelativePath, now: Date, removed: inout Int) {
        let sent = spool.directory(.sent)
        guard let entries = try? FileSystem.list(directory, in: sent) else { return }
        for entry in entries where entry.name.bytes.first != UInt8(ascii: ".") {
            let path = directory.appending(entry.name)
            if entry.kind == .directory { sweep(path, now: now, removed: &removed); continue }
            guard Spool.isManifestName(entry.name), let status = try? FileSystem.status(path, in: sent),
                  now.timeIntervalSince(status.mtime) > keep else { continue }
            let file = Spool.fileName(forManifest: path)
            do {
                if FileSystem.exists(file, in: sent) { try FileSystem.unlink(file, in: sent) }
                try FileSystem.unlink(path, in: sent)
                removed += 1
            } catch {
                logger.warn("retention: cannot delete", ["file": file.displayed(in: sent), "error": "\(error)"])
            }
        }
    }
}
