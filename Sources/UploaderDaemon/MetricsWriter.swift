@preconcurrency import Glibc
import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore

/// Writes the `metrics_file` atomically — a hidden temporary name node_exporter ignores (not
/// `*.prom`), then a rename — so a scrape never reads half a file. A failing write is logged once, not
/// every 10 s, and logged again when it recovers.
package final class MetricsWriter: @unchecked Sendable {
    private let lock = NSLock()
    private let logger: Logger
    private var lastProblem: String?

    package init(logger: Logger) { self.logger = logger }

    package func write(_ text: String, to path: String) {
        lock.lock(); defer { lock.unlock() }
        let problem = Self.replace(path, with: text)
        if let problem, problem != lastProblem {
            logger.warn("cannot write metrics_file", ["file": path, "error": problem])
        } else if problem == nil, lastProblem != nil {
            logger.info("metrics_file written again", ["file": path])
        }
        lastProblem = problem
    }

    /// nil on success, else what failed.
    private static func replace(_ path: String, with text: String) -> String? {
        do {
            // No fsync: rewritten every 10 s. 0644: the textfile collector usually runs as another user.
            try FileSystem.writeAtomically(Array(text.utf8), toPath: path, syncFile: false, mode: 0o644)
            return nil
        } catch {
            return "\(error)"
        }
    }
}
