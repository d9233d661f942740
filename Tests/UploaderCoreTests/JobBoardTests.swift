import Foundation
@preconcurrency import Glibc
import Synchronization
import Testing
@testable import UploaderSupport
@testable import UploaderCore

/// The worker pool's hand-off: a job reaches an idle worker directly or waits for the next one,
/// and closing lets the backlog finish first. The daemon's mailbox hands over messages in order.
@Suite struct JobBoardTests {
    /// Waits until `count` workers are idle on the board, yielding the processor meanwhile; gives up
    /// after a deadline.
    private func waitUntilIdle(_ board: JobBoard<Int>, _ count: Int) throws {
        let deadline = Date().addingTimeInterval(10)
        while board.idleCount < count {
            guard Date() < deadline else { throw CancellationError() }
            sched_yield()
        }
    }

    /// Starts a worker that takes one job and hands it to `got`.
    private func worker(_ board: JobBoard<Int>, _ got: Mailbox<Int?>) {
        Thread { got.send(board.next(at: JobBoard<Int>.Seat(of: board))) }.start()
    }

    @Test func aJobPostedWithNoWorkerFreeWaitsForTheNextWorker() {
        let board = JobBoard<Int>()
        board.post(1)
        board.post(2)
        let seat = JobBoard<Int>.Seat(of: board)
        #expect(board.next(at: seat) == 1)
        #expect(board.next(at: seat) == 2)
        #expect(board.idleCount == 0)
    }

    @Test func aJobPostedWhileWorkersSleepGoesToTheOneThatWentIdleLast() throws {
        let board = JobBoard<Int>()
        let first = Mailbox<Int?>(), second = Mailbox<Int?>()
        worker(board, first)
        try waitUntilIdle(board, 1)
        worker(board, second)
        try waitUntilIdle(board, 2)
        board.post(7)
        #expect(second.take(timeout: 10) == .some(7))
        #expect(board.idleCount == 1)
        board.post(8)
        #expect(first.take(timeout: 10) == .some(8))
    }

    @Test func closingLetsTheBacklogFinishThenEndsEveryWorker() throws {
        let board = JobBoard<Int>()
        let idleWorker = Mailbox<Int?>()
        worker(board, idleWorker)
        try waitUntilIdle(board, 1)
        board.close()
        #expect(idleWorker.take(timeout: 10) == .some(nil), "an idle worker is woken and ends")

        let late = JobBoard<Int>()
        late.post(1)
        late.post(2)
        late.close()
        let seat = JobBoard<Int>.Seat(of: late)
        #expect(late.next(at: seat) == 1)
        #expect(late.next(at: seat) == 2)
        #expect(late.next(at: seat) == nil)
    }

    @Test func manyWorkersTakeEveryJobExactlyOnce() {
        let board = JobBoard<Int>()
        let taken = Mutex<[Int]>([])
        let done = DispatchGroup()
        for _ in 0..<8 {
            done.enter()
            Thread {
                let seat = JobBoard<Int>.Seat(of: board)
                while let job = board.next(at: seat) { taken.withLock { $0.append(job) } }
                done.leave()
            }.start()
        }
        for job in 0..<10_000 { board.post(job) }
        board.close()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(taken.withLock { $0.sorted() } == Array(0..<10_000))
    }

    @Test func theMailboxHandsOverMessagesInOrder() {
        let mailbox = Mailbox<Int>()
        for n in 1...4 { mailbox.send(n) }
        for n in 1...4 { #expect(mailbox.take(timeout: 0) == n) }
        #expect(mailbox.take(timeout: 0.01) == nil)
        mailbox.send(5)
        #expect(mailbox.take(timeout: 0) == 5)
    }

    /// A worker that posts a job with `keep: .later` runs it next itself: the idle worker is not woken.
    @Test func aJobAWorkerKeepsRunsNextOnThatWorkerAndWakesNoOne() throws {
        let board = JobBoard<Int>()
        let sleeper = Mailbox<Int?>()
        worker(board, sleeper)
        try waitUntilIdle(board, 1)
        let ran = Mailbox<[Int]>()
        Thread {
            let seat = JobBoard<Int>.Seat(of: board)
            WorkerSeat.enter(seat)
            board.post(7, keep: .later)
            board.post(8, keep: .later)   // one kept at most: this one goes to the board
            ran.send([board.next(at: seat) ?? -1])
        }.start()
        #expect(ran.take(timeout: 10) == [7])
        #expect(sleeper.take(timeout: 10) == .some(8), "the second job went to the idle worker")
    }

    /// Off a worker of this board (the watcher, a probe, another pool), keeping is an ordinary post.
    @Test func keepHereOffAWorkerIsAnOrdinaryPost() throws {
        let board = JobBoard<Int>(), other = JobBoard<Int>()
        let sleeper = Mailbox<Int?>()
        worker(board, sleeper)
        try waitUntilIdle(board, 1)
        board.post(1, keep: .later)
        #expect(sleeper.take(timeout: 10) == .some(1))
        let done = Mailbox<Bool>()
        Thread {
            WorkerSeat.enter(JobBoard<Int>.Seat(of: other))
            board.post(2, keep: .later)
            WorkerSeat.withoutKeeping { board.post(3, keep: .later) }
            done.send(true)
        }.start()
        #expect(done.take(timeout: 10) == true)
        let seat = JobBoard<Int>.Seat(of: board)
        #expect(board.next(at: seat) == 2)
        #expect(board.next(at: seat) == 3)
    }

    /// An urgent job stays with a worker only while it steps the last report of its job, and then
    /// runs before a kept job that can wait.
    @Test func anUrgentJobIsKeptOnlyByAWorkerFinishingItsJob() throws {
        let board = JobBoard<Int>()
        let sleeper = Mailbox<Int?>()
        worker(board, sleeper)
        try waitUntilIdle(board, 1)
        let ran = Mailbox<[Int]>()
        Thread {
            let seat = JobBoard<Int>.Seat(of: board)
            WorkerSeat.enter(seat)
            board.post(1, keep: .ifFinishing)   // mid-job: the idle worker takes it
            WorkerSeat.finishing {
                board.post(2, keep: .later)
                board.post(3, keep: .ifFinishing)
            }
            ran.send([board.next(at: seat) ?? -1, board.next(at: seat) ?? -1])
        }.start()
        #expect(sleeper.take(timeout: 10) == .some(1))
        #expect(ran.take(timeout: 10) == [3, 2])
    }

    /// With a background limit, urgent jobs waiting go before background ones, and no more
    /// background jobs run at once than the limit: the threads left stay free for urgent ones.
    @Test func urgentJobsGoFirstAndBackgroundJobsTakeAtMostTheirThreads() throws {
        let board = JobBoard<Int>(backgroundLimit: 1)
        board.post(1, lane: .background)
        board.post(2, lane: .background)
        board.post(3, lane: .urgent)
        let first = JobBoard<Int>.Seat(of: board), second = JobBoard<Int>.Seat(of: board)
        #expect(board.next(at: first) == 3, "the urgent job jumps the line")
        #expect(board.next(at: first) == 1)
        let waiting = Mailbox<Int?>()
        Thread { waiting.send(board.next(at: second)) }.start()
        try waitUntilIdle(board, 1)
        #expect(waiting.take(timeout: 0.05) == nil, "the one background thread is taken: job 2 waits")
        board.post(4, lane: .urgent)
        #expect(waiting.take(timeout: 10) == .some(4), "an urgent job still finds a thread")
        #expect(board.next(at: first) == 2, "the background job ran to its end: the next may start")
        board.close()
        #expect(board.next(at: first) == nil)
        #expect(board.next(at: second) == nil)
    }

    /// A claim a worker kept for later waits in the background line while the background threads
    /// are taken, and an urgent job waiting runs before it.
    @Test func aKeptBackgroundJobWaitsItsTurnBehindUrgentJobs() throws {
        let board = JobBoard<Int>(backgroundLimit: 1)
        let ran = Mailbox<[Int]>()
        Thread {
            let seat = JobBoard<Int>.Seat(of: board)
            WorkerSeat.enter(seat)
            board.post(1, keep: .later, lane: .background)
            board.post(2, lane: .urgent)
            let a = board.next(at: seat) ?? -1, b = board.next(at: seat) ?? -1
            ran.send([a, b])
        }.start()
        #expect(ran.take(timeout: 10) == [2, 1])
        board.close()
    }
}
