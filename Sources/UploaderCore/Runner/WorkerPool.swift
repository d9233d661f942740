import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// Where a profile's executor runs its jobs: worker threads in production, a seeded scheduler
/// in the simulator (which then decides every interleaving).
package protocol JobQueue: Sendable {
    /// Runs `job` on some worker, which lends it the transport it owns; a worker submitting it
    /// while it steps the owner may keep it, as `keep` says; `lane`: whether a slot waits for it.
    func submit(_ job: @escaping @Sendable (any Transport) -> Void, keep: JobKeeping, lane: JobLane)
    /// Runs a reachability probe (blocking up to `connect_timeout`), never on the owner's thread.
    func probe(_ work: @escaping @Sendable () -> Void)
    /// Lets the jobs already queued finish, then ends the workers.
    func shutDown()
}

extension JobQueue {
    /// Runs `job` (a background one) on some worker, never kept by the one submitting it.
    func submit(_ job: @escaping @Sendable (any Transport) -> Void) { submit(job, keep: .no, lane: .background) }
}

/// Threads that run a profile's jobs (claims, uploads, settles, moves back). Each thread owns
/// one transport for its whole life, so keep-alive connections are reused, and blocking work
/// (libcurl, hashing, fsync) never runs inside the owner's steps or on Swift's cooperative pool.
package final class WorkerPool: JobQueue {
    package typealias Job = @Sendable (any Transport) -> Void

    private let jobs: JobBoard<Job>
    /// How many of the threads still run.
    private let running: Monitor<Int>

    /// Starts `size` threads named after `label`, by `scheduler`; `makeTransport` runs once on each.
    /// `backgroundLimit`: how many of them background jobs may take at once (nil: any number, and
    /// jobs run first come first served).
    package init(size: Int, backgroundLimit: Int? = nil, label: String, scheduler: any Scheduler = .system,
                 makeTransport: @escaping @Sendable () -> any Transport) {
        jobs = JobBoard(backgroundLimit: backgroundLimit, scheduler: scheduler)
        running = Monitor(size, scheduler: scheduler)
        for index in 0..<size {
            scheduler.startThread(named: "\(label)-\(index)") { [jobs, running] in
                let transport = makeTransport()
                let seat = JobBoard<Job>.Seat(of: jobs)
                WorkerSeat.enter(seat)
                while let job = jobs.next(at: seat) {
                    job(transport)
                }
                running.update { $0 -= 1 }
            }
        }
    }

    package func submit(_ job: @escaping Job, keep: JobKeeping, lane: JobLane) { jobs.post(job, keep: keep, lane: lane) }

    /// A probe is a background job: no thread of its own (the pool is idle while a profile is
    /// offline, which is when probes come), and never before an upload or a settle.
    package func probe(_ work: @escaping @Sendable () -> Void) { jobs.post({ _ in work() }, lane: .background) }

    /// Lets every thread finish the jobs already queued, then end; waits for them.
    package func shutDown() {
        jobs.close()
        running.wait { $0 == 0 ? () : nil }
    }
}
