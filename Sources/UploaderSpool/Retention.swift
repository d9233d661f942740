import Foundation
import UploaderSupport
import UploaderConfig

/// `keep_sent`: deletes files (and their manifests) in sent/ older than the retention period.
///
/// Age is the manifest's modification time, which is when the file was recorded as sent.
/// A file without a manifest in sent/ is left alone: it is not ours to judge.
package struct Retention: Sendable {
    package let spool: Spool
    private var fs: any SpoolFileSystem { spool.fs }
    package let keep: TimeInterval
    package let logger: Logger

    package init(spool: Spool, keep: TimeInterval, logger: Logger) {
        self.spool = spool
        self.keep = keep
        self.logger = logger
    }

    /// Removes what is older than `keep` at `now`; returns how many files it deleted.
    @discardableResult
    package func sweep(now: Date) -> Int {
        guard keep > 0 else { return 0 }
        var removed = 0
        let sent = spool.directory(.sent)
        DirectoryWalker(root: sent, fs: fs, logger: logger).walk { entry in
            if entry.kind == .directory { return true }
            guard Spool.isManifestName(entry.name), let status = try? fs.status(entry.path, in: sent),
                  now.timeIntervalSince(status.mtime) > keep else { return false }
            let file = Spool.fileName(forManifest: entry.path)
            do {
                if fs.exists(file, in: sent) { try fs.unlink(file, in: sent) }
                try fs.unlink(entry.path, in: sent)
                removed += 1
            } catch {
                logger.warn("retention: cannot delete", ["file": file.displayed(in: sent), "error": "\(error)"])
            }
            return false
        }
        if removed > 0 {
            logger.info("retention: deleted old files from sent/", ["profile": spool.paths.sent, "files": String(removed)])
        }
        return removed
    }
}
