import Foundation
@preconcurrency import Glibc
import Synchronization
import Testing
@testable import UploaderSupport

/// Items that arrive together run as one batch led by one caller; each caller gets its own
/// answer (or error), and nobody waits for ever.
@Suite struct BatcherTests {
    struct Odd: Error {}

    @Test func anItemAloneIsABatchOfOneRunByItsCaller() throws {
        let batcher = Batcher<Int, Int>()
        let batches = Mutex<[[Int]]>([])
        let answer = try batcher.run(7) { items in
            batches.withLock { $0.append(items) }
            return items.map { .success($0 * 2) }
        }
        #expect(answer == 14)
        #expect(batches.withLock { $0 } == [[7]])
    }

    @Test func callersArrivingWhileABatchRunsShareTheNextAndEachGetsItsOwnAnswer() {
        let batcher = Batcher<Int, Int>()
        let largest = Mutex(0)
        let answers = Mutex<[Int: Result<Int, any Error>]>([:])
        let done = DispatchGroup()
        let threads = 8, each = 200
        for thread in 0..<threads {
            done.enter()
            Thread {
                for n in 0..<each {
                    let item = thread * each + n
                    let result = Result {
                        try batcher.run(item) { items in
                            largest.withLock { $0 = max($0, items.count) }
                            // A batch takes a while (as fsyncs do): others pile up meanwhile.
                            for _ in 0..<5 { sched_yield() }
                            return items.map { $0 % 2 == 0 ? .success($0 * 2) : .failure(Odd()) }
                        }
                    }
                    answers.withLock { $0[item] = result }
                }
                done.leave()
            }.start()
        }
        #expect(done.wait(timeout: .now() + 60) == .success, "every caller returned")
        let all = answers.withLock { $0 }
        #expect(all.count == threads * each)
        for (item, result) in all {
            if item % 2 == 0 { #expect((try? result.get()) == item * 2) } else { #expect(throws: Odd.self) { try result.get() } }
        }
        print("batcher: largest batch \(largest.withLock { $0 }) of \(threads) callers")
        #expect(largest.withLock { $0 } > 1, "callers that arrived together shared a batch")
    }
}
