import Foundation
import UploaderSupport
import UploaderConfig

/// The small JSON file (`<spool>/.state.json`) a running daemon keeps for `status`:
/// its pid, whether the destination is reachable and why the profile pauses, the last
/// error, refused names, and the uploads in flight with their progress.
package struct DaemonState: Codable, Sendable, Equatable {
    package var pid: Int32
    package var reachable: Bool
    package var lastError: String?
    package var refused: Int
    package var updatedAt: String
    package var pausedReason: PauseReason?
    package var inFlight: [InFlightFile]
    /// The daemon's last count of what `status` cannot count for a caller who may not read
    /// retry/ (a producer): nil until the first count, or from a daemon of an older version.
    package var counts: Counts?

    /// Files and bytes waiting in retry/, failed for good, and delivered in the last 24 h.
    package struct Counts: Codable, Sendable, Equatable {
        package var retry: Tally
        package var failed: Tally
        package var sent24h: Tally

        package struct Tally: Codable, Sendable, Equatable {
            package var files: Int
            package var bytes: Int64
        }

        package init(_ census: SpoolCensus) {
            retry = Tally(files: census.retry.files, bytes: census.retry.bytes)
            failed = Tally(files: census.failed.files, bytes: census.failed.bytes)
            sent24h = Tally(files: census.sent24h.files, bytes: census.sent24h.bytes)
        }

        enum CodingKeys: String, CodingKey { case retry, failed, sent24h = "sent_24h" }
    }

    package init(pid: Int32, reachable: Bool, lastError: String?, refused: Int, updatedAt: String,
                 pausedReason: PauseReason? = nil, inFlight: [InFlightFile] = []) {
        self.pid = pid
        self.reachable = reachable
        self.lastError = lastError
        self.refused = refused
        self.updatedAt = updatedAt
        self.pausedReason = pausedReason
        self.inFlight = inFlight
    }

    enum CodingKeys: String, CodingKey {
        case pid, reachable, lastError = "last_error", refused, updatedAt = "updated_at"
        case pausedReason = "paused_reason", inFlight = "in_flight", counts
    }

    /// Keys added later may be missing: a state file of a daemon started before an upgrade still reads.
    package init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        pid = try c.decode(Int32.self, forKey: .pid)
        reachable = try c.decode(Bool.self, forKey: .reachable)
        lastError = try c.decodeIfPresent(String.self, forKey: .lastError)
        refused = try c.decode(Int.self, forKey: .refused)
        updatedAt = try c.decode(String.self, forKey: .updatedAt)
        // A hint: a reason this version does not know (another version's daemon) reads as none.
        pausedReason = try? c.decodeIfPresent(PauseReason.self, forKey: .pausedReason)
        inFlight = try c.decodeIfPresent([InFlightFile].self, forKey: .inFlight) ?? []
        // The same for counts of another version's shape: status then counts the spool itself.
        counts = try? c.decodeIfPresent(Counts.self, forKey: .counts)
    }

    /// Written without fsync: it is a hint, rebuilt every second or so, not a record. A failure
    /// is thrown for the caller to report. Mode 0644: whoever reaches the spool root (the service,
    /// and a `producers` group) may read it; it holds no secret.
    package func write(to paths: SpoolPaths) throws {
        try FileSystem.writeAtomically(Array(try JSONEncoder().encode(self)), toPath: paths.stateFile, syncFile: false, mode: 0o644)
    }

    /// The state of the daemon holding this spool's lock, or nil when none runs.
    package static func readIfRunning(_ paths: SpoolPaths) -> DaemonState? {
        if case .running(let state) = observe(paths) { return state }
        return nil
    }

    /// Whether a daemon holds the spool, none does, or one stopped without exiting cleanly:
    /// a clean exit removes `.state.json` (`removeAtExit`), so one left with no lock holder is
    /// a daemon that crashed or was killed.
    package enum Presence: Sendable, Equatable {
        case running(DaemonState)
        /// Running (the lock is held) but its state file cannot be read yet or by this user.
        case runningUnseen
        case none
        /// No daemon holds the lock, but the state file of one (its pid, when readable) is left.
        case died(pid: Int32?)
        /// The lock file exists but cannot be opened (the reason).
        case cannotTell(String)
    }

    package static func observe(_ paths: SpoolPaths) -> Presence {
        let lock: FileDescriptor
        do {
            lock = try FileDescriptor.open(paths.lockFile, .readOnly)
        } catch let error as SystemError {
            if error.isNotFound { return FileSystem.exists(path: paths.stateFile) ? .died(pid: storedPID(paths)) : .none }
            return .cannotTell(error.description)
        } catch {
            return .cannotTell("\(error)")
        }
        // A lock that cannot even be tried (not only one held) counts as held: the state file then tells.
        if (try? lock.tryLock(exclusive: false, path: paths.lockFile)) == true {
            lock.unlock()
            return FileSystem.exists(path: paths.stateFile) ? .died(pid: storedPID(paths)) : .none
        }
        guard let data = FileManager.default.contents(atPath: paths.stateFile),
              // A hint: a state file cut short, or another version's, reads as none (status counts the spool alone).
              let state = try? JSONDecoder().decode(DaemonState.self, from: data) else { return .runningUnseen }
        return .running(state)
    }

    private static func storedPID(_ paths: SpoolPaths) -> Int32? {
        guard let data = FileManager.default.contents(atPath: paths.stateFile) else { return nil }
        // A hint for the message: a state file cut short names no pid.
        return (try? JSONDecoder().decode(DaemonState.self, from: data))?.pid
    }

    /// At a clean exit, while the lock is still held: no state file means no daemon was stopped
    /// by surprise. A failure is thrown for the caller to report (ENOENT is none).
    package static func removeAtExit(_ paths: SpoolPaths) throws {
        try FileSystem.removeIfPresent(path: paths.stateFile)
    }
}
