@preconcurrency import Glibc
import Foundation

/// Writes the `metrics_file` atomically — a temporary name node_exporter ignores (not `*.prom`),
/// then a rename — so a scrape never reads half a file. A failing write is logged once, not
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
        let directory = (path as NSString).deletingLastPathComponent
        let temp = (directory.isEmpty ? "" : directory + "/") + ".\((path as NSString).lastPathComponent).\(getpid()).tmp"
        // 0644: the textfile collector usually runs as another user.
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { return "open \(temp): \(String(cString: strerror(errno)))" }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                unlink(temp)
                return "write \(temp): \(reason)"
            }
            offset += n
        }
        _ = fchmod(fd, 0o644)
        close(fd)
        guard rename(temp, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temp)
            return "rename to \(path): \(reason)"
        }
        return nil
    }
}
