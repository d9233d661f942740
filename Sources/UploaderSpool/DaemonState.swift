@preconcurrency import Glibc
import Foundation
import UploaderSupport
import UploaderConfig

/// The small JSON file (`<spool>/.state.json`) a running daemon keeps for `status`:
/// its pid, whether the destination is reachable, the last error, refused names.
package struct DaemonState: Codable, Sendable, Equatable {
    package var pid: Int32
    package var reachable: Bool
    package var lastError: String?
    package var refused: Int
    package var updatedAt: String
    /// Why the profile starts nothing now: `offline`, `outside_window`, `interface`; nil when it does.
    package var pausedReason: String?

    package init(pid: Int32, reachable: Bool, lastError: String?, refused: Int, updatedAt: String, pausedReason: String? = nil) {
        self.pausedReason = pausedReason
        self.pid = pid
        self.reachable = reachable
        self.lastError = lastError
        self.refused = refused
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case pid, reachable, lastError = "last_error", refused, updatedAt = "updated_at", pausedReason = "paused_reason"
    }

    /// Written without fsync: it is a hint, rebuilt every few seconds, not a record.
    package func write(to paths: SpoolPaths) {
        guard let data = try? JSONEncoder().encode(self) else { return }
        try? FileSystem.writeAtomically(Array(data), toPath: paths.stateFile, syncFile: false)
    }

    /// The state of the daemon holding this spool's lock, or nil when none runs.
    package static func readIfRunning(_ paths: SpoolPaths) -> DaemonState? {
        let fd = open(paths.lockFile, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil
        }
        guard let data = FileManager.default.contents(atPath: paths.stateFile),
              let state = try? JSONDecoder().decode(DaemonState.self, from: data) else { return nil }
        return state
    }
}
