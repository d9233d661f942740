@preconcurrency import Glibc
import UploaderSupport

/// The faults a disk gives the process's writes (DESIGN §13): a full disk (ENOSPC) or a device
/// error (EIO) on a write, a create or a link; a short write (the caller must write the rest);
/// and EIO on fsync, after which the kernel counts the file's pages as clean although the disk
/// kept the old content: a later fsync succeeds and persists nothing, and a power cut loses the
/// data (the classic trap). Drawn by the simulator per call (`SimDiskState.faults`); the
/// producer's own calls never fail this way.
extension SimDisk {
    /// Where a fault may strike.
    enum FaultSite: Sendable { case write, fsync, allocate, rename, unlink, read, directorySync }

    /// What the disk does to one call.
    enum Fault: Sendable, Equatable { case none, noSpace, ioError, shortWrite }

    /// Turns faults on (`draw` decides each call) or off (nil: the disk never fails on its own).
    func injectFaults(_ draw: (@Sendable (FaultSite) -> Fault)?) {
        state.withLock { $0.faults = draw }
    }

    /// Calls `observer` after each counted operation (its errno, 0 when it succeeded), before the
    /// caller sees the result: a test lays out what another thread does in that instant (nil: nobody is told).
    func observeOperations(_ observer: SimDiskState.OperationObserver?) {
        state.withLock { $0.operationObserver = observer }
    }

    /// Calls `observer` as a lock is asked for, before it is held: a test lays out what another
    /// process does in that instant, as it would before a lock it waits for (nil: nobody is told).
    func observeLocks(_ observer: (@Sendable (_ path: String) -> Void)?) {
        state.withLock { $0.lockObserver = observer }
    }

    /// Runs `body` (the producer's or the set-up's calls) with no fault drawn.
    func withoutFaults<R>(_ body: () throws -> R) rethrows -> R {
        let saved = state.withLock { state in
            defer { state.faults = nil }
            return state.faults
        }
        defer { state.withLock { $0.faults = saved } }
        return try body()
    }

    /// The fault for one call at `site`; `.none` while faults are off (and then nothing is drawn).
    func fault(at site: FaultSite) -> Fault {
        guard let draw = state.withLock({ $0.faults }) else { return .none }
        let fault = draw(site)
        if fault != .none { state.withLock { $0.faultsDrawn += 1 } }
        return fault
    }

    /// How many faults the disk has made so far.
    var faultsDrawn: Int { state.withLock { $0.faultsDrawn } }

    /// fsync(2) of `inode`; on EIO its content stays as the disk had it, whatever comes later.
    func fsync(_ inode: UInt64, _ display: String) throws {
        let fault = fault(at: .fsync)
        try operation("fsync", display) { state in
            if fault == .ioError || fault == .noSpace {
                state.loseWriteback(of: inode)
                throw SimErrno(EIO)
            }
            state.syncFile(inode)
        }
    }

    /// ENOSPC (or EIO) for a call that needs a new inode or a directory block (create, link,
    /// mkdir, a rename's new entry), or EIO for one that changes nothing then (unlink, read, a
    /// directory's fsync), `fault` drawn before the call (`fault(at:)`).
    static func refuse(_ fault: Fault) throws(SimErrno) {
        switch fault {
        case .noSpace: throw SimErrno(ENOSPC)
        case .ioError: throw SimErrno(EIO)
        case .none, .shortWrite: return
        }
    }
}
