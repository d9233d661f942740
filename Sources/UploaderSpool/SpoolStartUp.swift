import UploaderSupport

/// The start of every process that works a profile's spool — the daemon's runner and
/// `run --once` alike: its directories, then its lock. The caller recovers the spool only once it
/// holds the lock, so a second process on the same spool stops here, having read and changed
/// none of it. The simulator starts its daemon, and draws a second one, through this same code.
package enum SpoolStartUp {
    /// Makes the spool's directories and takes its lock (`SpoolLock`); throws `SpoolLock.Failure`
    /// when another process holds it, or what stopped the directories.
    package static func take(_ spool: Spool, clock: any Clock = SystemClock(),
                             processID: Int32 = ProcessIdentity.processID) throws -> SpoolLock {
        try spool.prepare()
        return try SpoolLock(spool.fs, root: spool.paths.root, clock: clock, processID: processID)
    }
}
