@preconcurrency import Glibc
import CSysShims
import Foundation

extension FileSystem {
    /// Runs `body` holding a lock on the file `name` in `directory` (created when absent, mode 0660,
    /// owned like `directory` when root creates it): `exclusive` waits for every other holder,
    /// shared ones wait only for an exclusive one. An open file description lock (F_OFD_SETLKW):
    /// each call opens the file afresh, so two threads of one process each hold their own lock
    /// (and conflict as two processes would); the lock ends when its descriptor is closed.
    package static func withLock<T>(_ name: RelativePath, in directory: String, exclusive: Bool,
                                     _ body: () throws -> T) throws -> T {
        let display = name.displayed(in: directory)
        let fd = try openLockFile(display, directory: directory, exclusive: exclusive)
        defer { Glibc.close(fd) }
        try retryingEINTR("lock", path: display) { uploader_ofd_lock_wait(fd, exclusive ? 1 : 0) }
        return try body()
    }

    /// Opens the lock file (for writing when the lock is exclusive, as F_WRLCK needs), creating
    /// it with the directory's owner and group so the daemon's user and root can both open it.
    private static func openLockFile(_ path: String, directory: String, exclusive: Bool) throws -> Int32 {
        let access = exclusive ? O_RDWR : O_RDONLY
        while true {
            let existing = open(path, access | O_NOFOLLOW | O_CLOEXEC)
            if existing >= 0 { return existing }
            guard Errno.current == .noEntry || Errno.current == .interrupted else { throw SystemError("open", path: path) }
            let created = open(path, access | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o660)
            if created < 0 {
                if Errno.current == .exists || Errno.current == .interrupted { continue }  // another process made it first
                throw SystemError("create", path: path)
            }
            do {
                try retryingEINTR("chmod", path: path) { fchmod(created, 0o660) }  // whatever the umask took
                var dir = stat()
                if geteuid() == 0, stat(directory, &dir) == 0 {
                    try retryingEINTR("chown", path: path) { fchown(created, dir.st_uid, dir.st_gid) }
                }
            } catch {
                Glibc.close(created)
                throw error
            }
            return created
        }
    }
}
