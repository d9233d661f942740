
/// Where stderr leads, which decides how a log line looks: a terminal or a file gets lines
/// that carry their own timestamp; the journal gets each line prefixed with its syslog
/// priority (`<3>`) and no timestamp, because journald stamps each line and stores it at
/// that priority (a unit's default `SyslogLevelPrefix=yes`).
package enum LogDestination: Sendable, Equatable {
    case stream
    case journal

    /// The journal when systemd's `JOURNAL_STREAM` (`DEV:INODE`, decimal) names stderr itself:
    /// the variable is inherited by children whose stderr may lead elsewhere, so it counts only
    /// when it matches `fstat(2)` of fd 2. Read once, where the executable is wired up.
    package static func ofStandardError(environment: [String: String]) -> LogDestination {
        guard let stream = environment["JOURNAL_STREAM"] else { return .stream }
        let info: FileSystem.Status
        do { info = try KernelCalls().status(of: .standardError) } catch { return .stream }  // no stderr: no journal
        return matching(journalStream: stream, device: info.device, inode: info.inode)
    }

    /// `.journal` when `journalStream` is exactly `DEVICE:INODE` of the given file.
    package static func matching(journalStream: String?, device: UInt64, inode: UInt64) -> LogDestination {
        guard let journalStream else { return .stream }
        let parts = journalStream.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return .stream }
        return dev == device && ino == inode ? .journal : .stream
    }

    /// What goes before a line of `level`: its `<N>` for the journal, nothing otherwise.
    package func prefix(_ level: LogLevel) -> String {
        switch self {
        case .stream: return ""
        case .journal: return "<\(level.syslogPriority)>"
        }
    }
}
