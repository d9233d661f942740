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
        try retryingEINTR("lock", path: display) { uploader_ofd_lock_wait(fd.rawValue, exclusive ? 1 : 0) }
        return try body()
    }

    /// Opens the lock file (for writing when the lock is exclusive, as F_WRLCK needs), creating
    /// it with the directory's owner and group so the daemon's user and root can both open it.
    private static func openLockFile(_ path: String, directory: String, exclusive: Bool) throws -> FileDescriptor {
        let access = exclusive ? O_RDWR : O_RDONLY
        while true {
            let existing = open(path, access | O_NOFOLLOW | O_CLOEXEC)
            if existing >= 0 { return FileDescriptor(adopting: existing) }
            guard Errno.current == .noEntry || Errno.current == .interrupted else { throw SystemError("open", path: path) }
            let made = open(path, access | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o660)
            if made < 0 {
                if Errno.current == .exists || Errno.current == .interrupted { continue }  // another process made it first
                throw SystemError("create", path: path)
            }
            let created = FileDescriptor(adopting: made)  // closed by a throw below
            try retryingEINTR("chmod", path: path) { fchmod(created.rawValue, 0o660) }  // whatever the umask took
            var dir = stat()
            if geteuid() == 0, stat(directory, &dir) == 0 {
                try retryingEINTR("chown", path: path) { fchown(created.rawValue, dir.st_uid, dir.st_gid) }
            }
            return created
        }
    }
}
