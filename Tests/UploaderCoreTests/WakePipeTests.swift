@preconcurrency import Glibc
import Testing
@testable import UploaderSupport
@testable import UploaderDaemon

/// The service loop's wake pipe: a wake-up that comes while the loop empties the pipe is never
/// lost. The interleaving is forced: the test's read(2) wakes the pipe between two reads, as
/// another thread moving a deadline sooner would.
@Suite struct WakePipeTests {
    @Test func aWakeUpWhileThePipeIsEmptiedLeavesTheNextWakeUpSeen() throws {
        let pipe = WakePipe()
        pipe.wake()
        #expect(try pipe.pending)
        var reads = 0
        pipe.drain { buffer in
            reads += 1
            let got = read(pipe.readEnd, buffer.baseAddress, buffer.count)
            if reads == 1 { pipe.wake() }  // another thread's wake-up, between the drain's reads
            return got
        }
        #expect(reads >= 2, "the drain reads until the pipe is empty")
        // Whatever that wake-up changed, the loop reads its state after the drain; what matters
        // is that the next wake-up is not swallowed by a flag left set over an empty pipe.
        pipe.wake()
        #expect(try pipe.pending, "a wake-up after the drain reaches the next poll")
        pipe.drain()
        #expect(try !pipe.pending)
    }

    @Test func wakeUpsBeforeTheLoopReadsLeaveOneByte() throws {
        let pipe = WakePipe()
        for _ in 0..<1_000 { pipe.wake() }
        var total = 0
        pipe.drain { buffer in
            let got = read(pipe.readEnd, buffer.baseAddress, buffer.count)
            if got > 0 { total += got }
            return got
        }
        #expect(total == 1)
        #expect(try !pipe.pending)
    }
}
