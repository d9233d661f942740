import Foundation
import Synchronization
import UploaderSupport
import UploaderTransfer
import UploaderCore

/// The executor's jobs, held until the simulator runs them — one at a time, in the order the
/// schedule picks, on the simulator's own thread. Inside a job, at every disk call and at each
/// step of a request, the schedule may interfere (a producer rewrites the file, the link drops,
/// the owner takes an event and cancels the upload): `interfere` is that hook. No threads, so
/// a schedule runs fast and replays exactly.
final class SimJobQueue: JobQueue, @unchecked Sendable {
    // Used by the simulator's thread only.
    private var pending: [@Sendable (any Transport) -> Void] = []
    private var probes: [@Sendable () -> Void] = []
    /// Set once the process's transport exists.
    var makeTransport: () -> any Transport = { preconditionFailure("no transport yet") }
    /// Called at the yield points of a running job.
    var interfere: () -> Void = {}
    /// Called as a request leaves for the server (its attempt is on record by then).
    var requestLeaves: () -> Void = {}
    private(set) var running = false

    /// Which worker runs a job is the schedule's choice here, so `keep` changes nothing.
    func submit(_ job: @escaping @Sendable (any Transport) -> Void, keep: JobKeeping) { pending.append(job) }
    func probe(_ work: @escaping @Sendable () -> Void) { probes.append(work) }
    func shutDown() {}

    var runnable: (jobs: Int, probes: Int) { (pending.count, probes.count) }

    /// Runs pending job `index` to its end.
    func run(_ index: Int) {
        let job = pending.remove(at: index)
        running = true
        job(makeTransport())
        running = false
    }

    func runProbe(_ index: Int) { probes.remove(at: index)() }

    /// A yield point inside a job: the schedule may change the world here.
    func yield() {
        guard running else { return }
        interfere()
    }

    /// The process died: what never started never will.
    func forget() {
        pending = []
        probes = []
    }

    /// The process is gone for good: drops its jobs and hooks, which hold this queue, its view
    /// and its executor, so the process is freed with the schedule instead of outliving it.
    func retire() {
        forget()
        makeTransport = { preconditionFailure("retired") }
        interfere = {}
        requestLeaves = {}
    }
}
