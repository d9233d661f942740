import UploaderSupport

/// The simulated machine's file locks (`F_OFD_SETLKW`): shared or exclusive, by the lock file's
/// path, across processes. A lock that cannot be taken waits, under the baton, until the holders
/// give it up — as the daemon's moves into and out of retry/ (shared) and `uploader retry`'s
/// (exclusive) wait for each other on `<spool>/.retry.lock`. A crashed process gives its locks
/// up as its threads unwind (their calls fail), as the kernel drops a dead process's locks.
final class SimFileLocks: Sendable {
    private struct Holders: Sendable {
        var shared = 0
        var exclusive = false
    }

    private let table: Monitor<[String: Holders]>

    init(baton: BatonScheduler) { table = Monitor([:], scheduler: baton) }

    /// Waits until the lock on `path` can be taken in that mode, and takes it.
    func take(_ path: String, exclusive: Bool) {
        table.wait { table -> Void? in
            let holders = table[path, default: Holders()]
            if holders.exclusive || (exclusive && holders.shared > 0) { return nil }
            if exclusive { table[path, default: Holders()].exclusive = true } else { table[path, default: Holders()].shared += 1 }
            return ()
        }
    }

    func give(_ path: String, exclusive: Bool) {
        table.update { table in
            if exclusive { table[path]?.exclusive = false } else { table[path]?.shared -= 1 }
        }
    }
}
