import Foundation
import Synchronization
import UploaderSupport

/// Where the worker pool's jobs wait: each job goes straight to an idle worker, which has a
/// wake-up of its own, or waits in a backlog until a worker comes back for more.
///
/// Why not one queue and one condition for every worker: with dozens of workers, each job
/// woke one of them, which then fought the others and the owner for the queue's lock (a
/// third of all futex calls in the small-file bench were such lock wakes). Here the board is a
/// `Monitor` whose idle workers are offered a job last-come first: the lock is held for a few
/// instructions, a posted job wakes exactly the worker it is given to, and the worker that went
/// idle last goes first (its connection is warm, its cache too).
///
/// With a `backgroundLimit` (the daemon's pool, and the simulator's, which is the same: a few
/// threads more than its slots) jobs wait in two lines: urgent ones (an upload, a settle, the
/// filer: a slot or a file waits for them) go first, and background ones (claims ahead, moves
/// back, passes over sent/, rescans, probes) run on at most that many threads at once, so the
/// threads left over are always there for the next upload. Without one every job waits in one
/// line, first come first served.
final class JobBoard<Job: Sendable>: Sendable {
    /// One worker's place: what it keeps for itself, on the board it works for.
    final class Seat: Sendable {
        /// Jobs this worker gave itself while it stepped the owner: it runs them next, unwoken.
        fileprivate let kept = Mutex(Kept())
        fileprivate let board: ObjectIdentifier

        init(of board: JobBoard) { self.board = ObjectIdentifier(board) }
    }

    /// What a worker keeps for itself: one urgent job (run first) and one that can wait, and
    /// whether the report being stepped is the last thing its current job does.
    fileprivate struct Kept {
        var urgent: Job?
        var later: Job?
        var finishing = false
        /// The job this worker runs now is a background one (counted in `backgroundRunning`).
        var inBackground = false
    }

    fileprivate enum Handoff: Sendable {
        case job(Job, JobLane)
        case close
    }

    private struct Board: Sendable {
        var urgent = FirstInLine<Job>()
        var background = FirstInLine<Job>()
        var closed = false
        /// Background jobs running now, and how many may at once (nil: one line, no limit).
        var backgroundRunning = 0
        let backgroundLimit: Int?

        var backgroundMayStart: Bool { backgroundLimit.map { backgroundRunning < $0 } ?? true }

        mutating func append(_ job: Job, _ lane: JobLane) {
            if lane == .background && backgroundLimit != nil { background.append(job) } else { urgent.append(job) }
        }

        /// What a worker looking for work gets now: a job, the end, or nothing yet.
        mutating func handoff() -> Handoff? {
            if let job = urgent.takeFirst() { return .job(job, .urgent) }
            if backgroundMayStart, let job = background.takeFirst() {
                backgroundRunning += 1
                return .job(job, .background)
            }
            return closed && background.isEmpty ? .close : nil
        }
    }

    private let board: Monitor<Board>
    /// As the board's: nil keeps one line and never counts.
    private let backgroundLimit: Int?

    init(backgroundLimit: Int? = nil, scheduler: any Scheduler = .system) {
        self.backgroundLimit = backgroundLimit
        board = Monitor(Board(backgroundLimit: backgroundLimit), order: .lastFirst, scheduler: scheduler)
    }

    /// Gives `job` to the worker that went idle last, or keeps it for the next one free. A
    /// worker of this board that posts it (while it steps the owner) may keep it for itself, as
    /// `keep` says: it is running anyway, so no thread is woken for it.
    func post(_ job: Job, keep: JobKeeping = .no, lane: JobLane = .urgent) {
        if keep != .no, let seat = WorkerSeat.current as? Seat, seat.board == ObjectIdentifier(self),
           seat.kept.withLock({ kept in
               switch keep {
               case .no: return false
               case .later:
                   guard kept.later == nil else { return false }
                   kept.later = job
               case .ifFinishing:
                   guard kept.finishing, kept.urgent == nil else { return false }
                   kept.urgent = job
               }
               return true
           }) {
            return
        }
        board.update { $0.append(job, lane) }
    }

    /// The next job for the worker at `seat`, waiting until there is one; nil once the board is
    /// closed and its backlog done. A job the worker kept runs first: an urgent one at once, one
    /// that can wait (a claim ahead, background) after the urgent jobs waiting and only while a
    /// background thread is free — else it joins the background line.
    func next(at seat: Seat) -> Job? {
        let (urgent, later, wasInBackground) = seat.kept.withLock { kept -> (Job?, Job?, Bool) in
            defer {
                if kept.urgent != nil { kept.urgent = nil } else { kept.later = nil }
                kept.inBackground = false
            }
            return (kept.urgent, kept.urgent == nil ? kept.later : nil, kept.inBackground)
        }
        if let urgent {
            if wasInBackground { board.update { $0.backgroundRunning -= 1 } }
            return urgent
        }
        if let later {
            guard backgroundLimit != nil else { return later }
            let taken: Handoff? = board.update { b in
                if wasInBackground { b.backgroundRunning -= 1 }
                if let job = b.urgent.takeFirst() {
                    // The kept job waits in the background line for whoever is free for it.
                    b.background.append(later)
                    return .job(job, .urgent)
                }
                guard b.backgroundMayStart else {
                    b.background.append(later)
                    return nil
                }
                b.backgroundRunning += 1
                return .job(later, .background)
            }
            if case .job(let job, let lane) = taken { return started(job, lane, at: seat) }
        } else if wasInBackground {
            board.update { $0.backgroundRunning -= 1 }
        }
        guard case .job(let job, let lane) = board.wait(for: { $0.handoff() }) else { return nil }
        return started(job, lane, at: seat)
    }

    private func started(_ job: Job, _ lane: JobLane, at seat: Seat) -> Job {
        if lane == .background { seat.kept.withLock { $0.inBackground = true } }
        return job
    }

    /// Workers asleep on the board now (for tests).
    var idleCount: Int { board.waitingCount }

    /// No more jobs: workers finish the backlog, then `next` returns nil to each.
    func close() {
        board.update { $0.closed = true }
    }
}

/// Which line of the board a job waits in when no worker is free for it.
package enum JobLane: Sendable {
    /// A slot waits for it (an upload, a settle): before every background job.
    case urgent
    /// A claim ahead, a move back, a quarantine, a pass over sent/, a rescan: on a few threads at once.
    case background
}

/// Whether a job posted by a worker, while it steps the owner, stays with that worker.
package enum JobKeeping: Sendable {
    /// Goes to an idle worker (or the backlog).
    case no
    /// Not urgent (a claim ahead): kept, to run once the worker's current job is done.
    case later
    /// Urgent (an upload, a settle): kept only when the worker's current job ends with the report
    /// being stepped, so it starts at once; otherwise it goes to an idle worker.
    case ifFinishing
}

/// The board seat of the worker running on this thread, if it is one: how `post(keep:)` knows
/// the job comes from a worker that will be free for it.
enum WorkerSeat {
    // The thread holds its seat until it ends.
    private static let slot = ThreadSlot("a worker's seat") { seat in if let seat { Unmanaged<AnyObject>.fromOpaque(seat).release() } }

    /// Called once by each worker thread, before its first job.
    static func enter(_ seat: AnyObject) {
        if let old = slot.value { Unmanaged<AnyObject>.fromOpaque(old).release() }
        slot.value = Unmanaged.passRetained(seat).toOpaque()
    }

    static var current: AnyObject? {
        slot.value.map { Unmanaged<AnyObject>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Runs `body` (the last report of a job) telling the board the worker is free once it returns.
    static func finishing<R>(_ body: () throws -> R) rethrows -> R {
        guard let seat = current as? any FinishingSeat else { return try body() }
        seat.setFinishing(true)
        defer { seat.setFinishing(false) }
        return try body()
    }

    /// Runs `body` as if on no worker: for a report after which the job goes on for long (an
    /// upload), so that nothing is kept waiting behind it.
    static func withoutKeeping<R>(_ body: () throws -> R) rethrows -> R {
        let seat = slot.value
        slot.value = nil
        defer { slot.value = seat }
        return try body()
    }
}

/// A seat of any board, as `WorkerSeat.finishing` sees it.
protocol FinishingSeat: AnyObject {
    func setFinishing(_ finishing: Bool)
}

extension JobBoard.Seat: FinishingSeat {
    func setFinishing(_ finishing: Bool) { kept.withLock { $0.finishing = finishing } }
}
