
/// A write refused for good — a read-only file system (`EROFS`) or no permission (`EACCES`) —
/// on a directory the daemon must write to, and which directory that is.
///
/// Under systemd's `ProtectSystem=strict` every path outside `ReadWritePaths=` is read-only,
/// and that is the usual cause of such a refusal for a spool or a metrics file outside
/// /var/spool/uploader: so the message names the line to add to the unit (`BindPaths=` for a
/// directory under /home, which `ProtectHome=tmpfs` hides).
package struct WriteRefused: Error, CustomStringConvertible, Equatable {
    package let cause: SystemError
    /// The configured directory that must be writable: a spool, an outbox, sent/ or retry/
    /// elsewhere, the directory of `metrics_file`.
    package let directory: String
    /// `directory` did not exist when the write was refused: it has to be made first, since
    /// systemd cannot start a unit whose `ReadWritePaths=` names a missing path.
    package let directoryMissing: Bool

    /// nil unless `cause` is such a refusal.
    package init?(_ cause: SystemError, directory: String) {
        guard cause.code == .readOnlyFileSystem || cause.code == .permissionDenied else { return nil }
        self.cause = cause
        self.directory = directory
        do {
            _ = try FileSystem.statusFollowingLinks(path: directory)
            directoryMissing = false
        } catch {
            directoryMissing = (error as? SystemError)?.isNotFound ?? false
        }
    }

    /// `error` as a `WriteRefused` when it is a refusal; otherwise `error` unchanged.
    package static func hinting(_ error: any Error, directory: String) -> any Error {
        guard let system = error as? SystemError, let refused = WriteRefused(system, directory: directory) else { return error }
        return refused
    }

    package var description: String {
        let create = directoryMissing ? "create \(directory) and " : ""
        if Self.hiddenByProtectHome(directory) {
            return "\(cause); under systemd \(create)add \"BindPaths=\(directory)\" to the unit in a drop-in "
                + "(its ProtectHome=tmpfs shows nothing under /home, /root and /run/user but what BindPaths= names)"
        }
        return "\(cause); under systemd \(create)add \"ReadWritePaths=\(directory)\" to the unit"
    }

    /// Under /home, /root or /run/user: the unit's `ProtectHome=` hides it, and only `BindPaths=` shows it.
    static func hiddenByProtectHome(_ directory: String) -> Bool {
        ["/home", "/root", "/run/user"].contains { directory == $0 || directory.hasPrefix($0 + "/") }
    }
}
