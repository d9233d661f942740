import Foundation
@preconcurrency import Glibc
import Synchronization
import Testing
@testable import UploaderSupport

/// The one way threads wait (`Monitor`): a waiter returns what its condition took, once; an update
/// wakes exactly the waiters whose conditions now hold; a wait with a deadline gives up without
/// losing what it was handed; and the waits go through the scheduler the monitor was given.
@Suite struct MonitorTests {
    /// Waits until `count` threads wait on `monitor`; gives up after a deadline.
    private func waitUntilWaiting<S>(_ monitor: Monitor<S>, _ count: Int) throws {
        let deadline = Date().addingTimeInterval(10)
        while monitor.waitingCount < count {
            guard Date() < deadline else { throw CancellationError() }
            sched_yield()
        }
    }

    @Test func aConditionThatHoldsAtOnceReturnsWithoutWaiting() {
        let monitor = Monitor([1, 2])
        #expect(monitor.wait { $0.popLast() } == 2)
        #expect(monitor.read { $0 } == [1])
    }

    @Test func everyItemPutInIsTakenByExactlyOneWaiter() {
        let monitor = Monitor<[Int]>([], order: .lastFirst)
        let takers = 8, each = 500
        // Each taker hands back what it took, once it took its share.
        let shares = Mailbox<[Int]>()
        for _ in 0..<takers {
            Thread { shares.send((0..<each).map { _ in monitor.wait { $0.popLast() } }) }.start()
        }
        for item in 0..<(takers * each) { monitor.update { $0.append(item) } }
        let taken = (0..<takers).compactMap { _ in shares.take(timeout: 30) }
        #expect(taken.count == takers)
        #expect(taken.flatMap { $0 }.sorted() == Array(0..<(takers * each)))
        #expect(monitor.waitingCount == 0)
    }

    @Test func anUpdateWakesOnlyTheWaitersWhoseConditionsHold() throws {
        let monitor = Monitor(0)
        let woken = Mailbox<Int>()
        for ticket in 1...3 {
            Thread { woken.send(monitor.wait { $0 >= ticket ? ticket : nil }) }.start()
        }
        try waitUntilWaiting(monitor, 3)
        monitor.update { $0 = 2 }
        let first = [woken.take(timeout: 10), woken.take(timeout: 10)].compactMap { $0 }
        #expect(first.sorted() == [1, 2])
        #expect(monitor.waitingCount == 1)
        monitor.update { $0 = 3 }
        #expect(woken.take(timeout: 10) == 3)
    }

    @Test func lastFirstOffersTheNewestWaiterFirst() throws {
        let monitor = Monitor<[String]>([], order: .lastFirst)
        let got = Mailbox<(String, String)>()
        for name in ["older", "newer"] {
            Thread { got.send((name, monitor.wait { $0.popLast() })) }.start()
            try waitUntilWaiting(monitor, name == "older" ? 1 : 2)
        }
        monitor.update { $0.append("job") }
        let first = got.take(timeout: 10)
        #expect(first?.0 == "newer")
        #expect(first?.1 == "job")
    }

    @Test func aWaitWithADeadlineGivesUpAndLeavesTheStateAlone() {
        let monitor = Monitor<[Int]>([])
        let started = DispatchTime.now()
        #expect(monitor.wait(until: .now() + 0.05, for: { $0.popLast() }) == nil)
        #expect(DispatchTime.now() >= started + 0.05)
        #expect(monitor.waitingCount == 0)
        monitor.update { $0.append(7) }
        #expect(monitor.read { $0 } == [7])
    }

    @Test func waitsGoThroughTheMonitorsScheduler() throws {
        let scheduler = CountingScheduler()
        let monitor = Monitor(false, scheduler: scheduler)
        let done = Mailbox<Bool>()
        scheduler.startThread(named: "waiter") { done.send(monitor.wait { $0 ? true : nil }) }
        try waitUntilWaiting(monitor, 1)
        monitor.update { $0 = true }
        #expect(done.take(timeout: 10) == true)
        #expect(scheduler.made.withLock { $0 } == 1)
        #expect(scheduler.started.withLock { $0 } == ["waiter"])
    }
}

/// The system's scheduling, counting the wake-ups it makes and the threads it starts.
private final class CountingScheduler: Scheduler {
    let made = Mutex(0)
    let started = Mutex<[String]>([])

    func makeWakeUp() -> any WakeUp {
        made.withLock { $0 += 1 }
        return SystemScheduler.system.makeWakeUp()
    }

    func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
        started.withLock { $0.append(name) }
        SystemScheduler.system.startThread(named: name, body)
    }
}
