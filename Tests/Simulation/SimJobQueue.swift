@preconcurrency import Glibc
import Foundation
import Synchronization
import UploaderSupport
import UploaderTransfer
import UploaderCore

/// The executor's jobs, run as production runs them: by a `WorkerPool` (its `JobBoard`, one
/// transport per thread) with production's threads
/// (`ProfileRunner.workerCount` threads, background jobs on `ProfileRunner.backgroundLimit` of them
/// at once, as production's), on real threads that the schedule's
/// `BatonScheduler` runs one at a time. Several jobs are in flight at once; at every disk call
/// and at each step of a request (`yield`) the baton may pass to another job or back to the
/// world, which then moves under them (the owner takes an event and may cancel that very
/// upload, a producer rewrites the file, the link drops, time passes). Probes wait here until
/// the schedule runs one on the world's thread.
final class SimJobQueue: JobQueue, @unchecked Sendable {
    // Used by the thread holding the baton only.
    let baton: BatonScheduler
    private var pool: WorkerPool?
    private var probes: [@Sendable () -> Void] = []
    /// Bodies on the wire during a stop (their time runs on the simulated clock).
    let wire = SimWire()
    /// Set once the process's transport exists.
    var makeTransport: () -> any Transport = { preconditionFailure("no transport yet") }
    /// Called as a request leaves for the server (its attempt is on record by then).
    var requestLeaves: () -> Void = {}
    /// A new job number (`SimServer.newJob`), set with the transport.
    var newJob: () -> Int = { 0 }
    /// The job each worker's transport sends for now, by the transport: a request's attempt.
    private var jobOfTransport: [ObjectIdentifier: Int] = [:]

    /// The job `transport` sends for now; nil for a transport no job holds (an S3 part thread's).
    func job(of transport: AnyObject) -> Int? { jobOfTransport[ObjectIdentifier(transport)] }

    /// The process's hooks, which end with it.
    var hooks: SimHookHost?
    /// The owner's timer, which ends with the process.
    var timer: SimTicker?
    /// The wall clock, to tell when each job was ordered.
    var now: () -> Date = { .distantPast }
    /// When the job each thread runs now was handed over (as the core ordered it), by thread.
    private var orderedAt: [pthread_t: Date] = [:]

    init(baton: BatonScheduler) { self.baton = baton }

    /// How many workers the process started.
    private(set) var workerCount = 0

    /// Starts the process's workers: `ProfileRunner.workerCount` for its policy, background jobs on
    /// `backgroundLimit` of them.
    func startWorkers(_ count: Int, backgroundLimit: Int) {
        workerCount = count
        pool = WorkerPool(size: count, backgroundLimit: backgroundLimit, label: "sim-worker", scheduler: baton) { [self] in makeTransport() }
    }

    /// Jobs started and not yet returned.
    private(set) var midway = 0

    func submit(_ job: @escaping @Sendable (any Transport) -> Void, keep: JobKeeping, lane: JobLane) {
        let ordered = now()
        pool!.submit({ [self] transport in
            midway += 1
            let key = ObjectIdentifier(transport as AnyObject)
            jobOfTransport[key] = newJob()
            let thread = pthread_self()
            orderedAt[thread] = ordered
            job(transport)
            orderedAt[thread] = nil
            jobOfTransport[key] = nil
            midway -= 1
        }, keep: keep, lane: lane)
    }

    /// When the job running on this thread was ordered (nil off a job's thread).
    var jobOrderedAt: Date? { orderedAt[pthread_self()] }
    func probe(_ work: @escaping @Sendable () -> Void) { probes.append(work) }

    /// Lets the jobs already queued finish (on a dead process they fail at once), then ends the workers.
    func shutDown() {
        pool?.shutDown()
        pool = nil
    }

    /// Workers that can run now, and probes waiting.
    var runnable: (workers: Int, probes: Int) { (baton.workersRunnable, probes.count) }

    func runProbe(_ index: Int) { probes.remove(at: index)() }

    /// A seam call (disk, transport) of a job: the baton may pass to another thread. The world's
    /// own calls (start-up recovery, a rescan, `uploader retry`) run without a break, as before.
    func yield() {
        guard !baton.worldHolds else { return }
        baton.yield()
    }

    /// The process died or stopped: its workers end (what never started fails at once), its probes are dropped.
    func forget() {
        wire.releaseAll()
        shutDown()
        hooks?.shutDown()
        timer?.finish()
        probes = []
    }

    /// The process is gone for good: drops its workers, probes and hooks, which hold this queue,
    /// its view and its executor, so the process is freed with the schedule instead of outliving it.
    func retire() {
        forget()
        makeTransport = { preconditionFailure("retired") }
        requestLeaves = {}
        newJob = { 0 }
        hooks = nil
        timer = nil
    }
}
