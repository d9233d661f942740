import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore

/// Writes the `metrics_file` atomically — a hidden temporary name node_exporter ignores (not
/// `*.prom`), then a rename — so a scrape never reads half a file. A failing write is logged once, not
/// every 10 s, and logged again when it recovers.
package final class MetricsWriter: Sendable {
    private let logger: Logger
    /// The last write's problem, if any; held while writing, so two writers never interleave.
    private let lastProblem = Mutex<String?>(nil)

    package init(logger: Logger) { self.logger = logger }

    package func write(_ text: String, to path: String) {
        lastProblem.withLock { last in
            let problem = Self.replace(path, with: text)
            if let problem, problem != last {
                logger.warn("cannot write metrics_file", ["file": path, "error": problem])
            } else if problem == nil, last != nil {
                logger.info("metrics_file written again", ["file": path])
            }
            last = problem
        }
    }

    /// nil on success, else what failed.
    private static func replace(_ path: String, with text: String) -> String? {
        do {
            // No fsync: rewritten every 10 s. 0644: the textfile collector usually runs as another user.
            try FileSystem.writeAtomically(Array(text.utf8), toPath: path, syncFile: false, mode: 0o644)
            return nil
        } catch {
            return "\(WriteRefused.hinting(error, directory: (path as NSString).deletingLastPathComponent))"
        }
    }
}
