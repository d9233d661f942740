import Foundation
@preconcurrency import Glibc
import Synchronization
import Testing
@testable import UploaderSupport
@testable import UploaderDaemon

/// The daemon's service loop: one thread ticks each deadline once when it comes (a sooner one
/// set while it waits for a later one included), runs what a watched descriptor brings, and
/// takes a handled signal from its signalfd.
@Suite struct ServiceLoopTests {
    @Test func eachDeadlineTicksOnceWhenItComesAndASoonerOneIsNotKeptWaiting() throws {
        let loop = ServiceLoop()
        loop.start()
        defer { loop.stop() }
        let ticks = Mailbox<String>()
        let late = loop.makeTicker(), soon = loop.makeTicker()
        late.start(name: "late") { ticks.send("late") }
        soon.start(name: "soon") { ticks.send("soon") }
        let started = loop.monotonic
        late.wake(in: 30)
        soon.wake(in: 0.05)
        #expect(ticks.take(timeout: 10) == "soon")
        #expect(loop.monotonic - started < 5, "the sooner deadline woke the loop waiting for the later one")
        #expect(ticks.take(timeout: 0.2) == nil, "each deadline ticks once; the later one is not due")
        late.wake(in: 0)
        #expect(ticks.take(timeout: 10) == "late", "a deadline moved sooner ticks then")
        late.stop()
        late.wake(in: 0)
        #expect(ticks.take(timeout: 0.2) == nil, "a stopped ticker ticks no more")
    }

    @Test func aWatchedDescriptorIsReadOnTheLoopUntilItsReaderLetsGo() throws {
        let loop = ServiceLoop()
        loop.start()
        defer { loop.stop() }
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        let readEnd = ends[0]
        defer { close(ends[0]); close(ends[1]) }
        let read = Mailbox<UInt8>()
        loop.watch(readEnd) {
            var byte: UInt8 = 0
            guard Glibc.read(readEnd, &byte, 1) == 1 else { return false }
            read.send(byte)
            return byte != 0
        }
        var one: UInt8 = 7, zero: UInt8 = 0
        _ = write(ends[1], &one, 1)
        #expect(read.take(timeout: 10) == 7)
        _ = write(ends[1], &zero, 1)
        #expect(read.take(timeout: 10) == 0)
        _ = write(ends[1], &one, 1)
        #expect(read.take(timeout: 0.2) == nil, "a reader that returned false is no longer called")
    }

    /// A signal blocked as the daemon blocks it reaches the handler through the signalfd.
    @Test func aBlockedSignalIsTakenFromItsSignalfd() throws {
        var set = sigset_t(), old = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGURG)
        // SIGURG: ignored by default, so a stray one in another test's thread harms nothing.
        pthread_sigmask(SIG_BLOCK, &set, &old)
        defer { pthread_sigmask(SIG_SETMASK, &old, nil) }
        let loop = ServiceLoop()
        let received = Mailbox<Signal>()
        try loop.takeSignals([Signal(rawValue: SIGURG)]) { received.send($0) }
        loop.start()
        defer { loop.stop() }
        // Sent to the loop's own thread, which inherited the mask (the daemon blocks the signals in
        // every thread; here the test's other threads would take a signal sent to the process).
        let ticker = loop.makeTicker()
        ticker.start(name: "signal") { pthread_kill(pthread_self(), SIGURG) }
        ticker.wake(in: 0)
        #expect(received.take(timeout: 10) == Signal(rawValue: SIGURG))
    }
}
