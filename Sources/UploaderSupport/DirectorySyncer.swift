import Foundation
import Synchronization

/// Group commit for directory fsyncs: workers that need the same directory made durable
/// at about the same time share one `fsync` instead of queueing one each.
///
/// A caller's renames are covered by any fsync of that directory that *starts* after the
/// call; so a caller waits for the fsync in progress (which may have started too early)
/// only if no later one is due, and the next fsync serves everyone who asked meanwhile.
/// Each directory has its own `Monitor`: a finished fsync wakes only the callers waiting for
/// that directory.
package final class DirectorySyncer: DirectorySyncing {
    private let groups = Mutex<[[UInt8]: DirectorySyncGroup]>([:])
    /// Entries this process has made durable once (`syncOnce`).
    private let durableOnce = Mutex<Set<[UInt8]>>([])
    private let fs: any SpoolFileSystem
    private let scheduler: any Scheduler

    package init(fs: any SpoolFileSystem = LocalFileSystem(), scheduler: any Scheduler = .system) {
        self.fs = fs
        self.scheduler = scheduler
    }

    /// Makes the directory holding `name` inside `directory` durable.
    package func syncDirectory(of name: RelativePath, in directory: String) throws {
        var key = Array(directory.utf8)
        if let parent = name.parent { key += [UInt8(ascii: "/")] + parent.bytes }
        let group = groups.withLock { groups in
            if let known = groups[key] { return known }
            let fresh = DirectorySyncGroup(scheduler: scheduler)
            groups[key] = fresh
            return fresh
        }
        try group.sync { try fs.syncDirectory(of: name, in: directory) }
    }

    /// Makes `name`'s entry in `directory` durable once in this process's life: for a directory
    /// made on first use, whose entry an earlier process may have left unsynced (killed between
    /// its mkdir and the fsync, or refused that fsync) while the directory itself is there.
    package func syncOnce(of name: RelativePath, in directory: String) throws {
        let key = Array(directory.utf8) + [0] + name.bytes
        if durableOnce.withLock({ $0.contains(key) }) { return }
        try syncDirectory(of: name, in: directory)
        durableOnce.withLock { _ = $0.insert(key) }
    }
}

/// The requests for one directory: how many were made, how many an fsync has covered, whether
/// one runs. A caller waits until an fsync covers its request, or until none runs (then it runs
/// the next, for every request made so far); an fsync that ends wakes exactly those it covered
/// and the one that runs the next.
final class DirectorySyncGroup: Sendable {
    private enum Turn: Sendable {
        /// Covered by an fsync that ended (with this error, if it failed).
        case done(SystemError?)
        /// Run one fsync for every request made so far.
        case run(covering: Int)
    }

    private struct Requests: Sendable {
        var requested = 0
        var completed = 0
        var running = false
        var error: SystemError?

        mutating func turn(for ticket: Int) -> Turn? {
            if completed >= ticket { return .done(error) }
            if running { return nil }
            running = true
            return .run(covering: requested)
        }
    }

    private let requests: Monitor<Requests>

    init(scheduler: any Scheduler = .system) { requests = Monitor(Requests(), scheduler: scheduler) }

    /// Returns once an fsync that started after this call has ended (run by this caller or another).
    func sync(_ fsync: () throws -> Void) throws {
        let ticket = requests.update { requests in
            requests.requested += 1
            return requests.requested
        }
        switch requests.wait(for: { $0.turn(for: ticket) }) {
        case .done(let failure?): throw failure
        case .done(nil): return
        case .run(let target):
            var failure: SystemError?
            do {
                try fsync()
            } catch let caught as SystemError {
                failure = caught
            } catch {
                // Every file layer throws SystemError; anything else still fails every caller it covered.
                failure = SystemError("fsync", path: "\(error)", code: .io)
            }
            requests.update { requests in
                requests.running = false
                // The planted bug: every request made so far counted as covered, those made while
                // the fsync ran (after it began) too.
                requests.completed = PlantedBug.groupCommitOvercounts.isActive ? requests.requested : target
                requests.error = failure
            }
            if let failure { throw failure }
        }
    }
}
