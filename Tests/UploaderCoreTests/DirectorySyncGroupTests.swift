import Foundation
import Synchronization
import Testing
@testable import UploaderSupport

/// The group commit behind every directory fsync of a move: callers share fsyncs, yet none
/// returns before an fsync that started after its call has ended — what makes its renames durable.
@Suite struct DirectorySyncGroupTests {
    /// Fsyncs numbered as they start; the numbers of those that have ended.
    private final class FsyncLog: Sendable {
        private let state = Mutex<(started: Int, ended: Set<Int>)>((0, []))

        var started: Int { state.withLock { $0.started } }

        func fsync() {
            let number = state.withLock { state in
                state.started += 1
                return state.started
            }
            // A real fsync blocks; giving the processor away lets other callers pile up meanwhile.
            for _ in 0..<3 { sched_yield() }
            state.withLock { _ = $0.ended.insert(number) }
        }

        /// Whether an fsync numbered above `number` has ended.
        func endedOneAfter(_ number: Int) -> Bool { state.withLock { $0.ended.contains { $0 > number } } }
    }

    @Test func everyCallerReturnsOnlyAfterAnFsyncThatStartedAfterItsCall() throws {
        let group = DirectorySyncGroup()
        let log = FsyncLog()
        let callers = 16, rounds = 200
        let broken = Mutex(0)
        let done = DispatchGroup()
        for _ in 0..<callers {
            done.enter()
            Thread {
                for _ in 0..<rounds {
                    let before = log.started
                    try? group.sync { log.fsync() }
                    if !log.endedOneAfter(before) { broken.withLock { $0 += 1 } }
                }
                done.leave()
            }.start()
        }
        #expect(done.wait(timeout: .now() + 60) == .success, "every caller returned")
        #expect(broken.withLock { $0 } == 0)
        // Shared: far fewer fsyncs than calls (each fsync covers everyone who asked before it began).
        print("directory sync group: \(callers * rounds) calls, \(log.started) fsyncs")
        #expect(log.started < callers * rounds)
    }

    @Test func aFailedFsyncIsReportedToEveryCallerItCovered() {
        let group = DirectorySyncGroup()
        let failure = SystemError("fsync", path: "outbox", code: .io)
        #expect(throws: SystemError.self) { try group.sync { throw failure } }
        // The next fsync succeeds: its callers hear nothing of the last one's failure.
        #expect(throws: Never.self) { try group.sync {} }
    }
}
