import Foundation
@preconcurrency import Glibc
import Synchronization
import Testing
@testable import UploaderSupport
@testable import UploaderCore

/// The owner's serial loop without a thread of its own: senders step it in turn, never two at
/// once, each event exactly once, and its timer ticks at the deadline the core asks for.
@Suite struct ProfileLoopTests {
    /// Records the effects the loop hands on, and whether two were ever handed on at once.
    final class Effects: Sendable {
        private let all = Mutex<[ProfileEffect]>([])
        private let inside = Atomic<Int>(0)
        private let overlap = Atomic<Bool>(false)

        func perform(_ effect: ProfileEffect) {
            if inside.add(1, ordering: .acquiringAndReleasing).newValue > 1 { overlap.store(true, ordering: .relaxed) }
            // Widens the window in which another sender could step too, if the loop let it: up to
            // 20 yields, for a millisecond at most (on a busy machine one yield can cost a whole
            // time slice of every other runnable thread, and 20 per effect then cost minutes).
            let until = DispatchTime.now().uptimeNanoseconds + 1_000_000
            for _ in 0..<20 where DispatchTime.now().uptimeNanoseconds < until { sched_yield() }
            all.withLock { $0.append(effect) }
            inside.subtract(1, ordering: .acquiringAndReleasing)
        }

        var taken: [ProfileEffect] { all.withLock { $0 } }
        var overlapped: Bool { overlap.load(ordering: .relaxed) }
    }

    private func loop(claimAhead: Int = 16) -> ProfileLoop {
        ProfileLoop(policy: ProfilePolicy(mode: .daemon, concurrency: 4, claimAhead: claimAhead, maxAttempts: 5, backoff: 30, maxBackoff: 3600),
                    clock: SystemClock())
    }

    @Test func eventsFromManyThreadsAreSteppedOnceEachAndNeverTwoAtOnce() {
        let loop = loop(claimAhead: 1_000)
        let effects = Effects()
        loop.start(ProfileState(seed: 1), name: "t") { effects.perform($0) }
        loop.send(.recovered(files: [], retries: [], ignoredDirectories: []))
        let senders = 8, perSender = 50
        let done = DispatchGroup()
        for sender in 0..<senders {
            done.enter()
            Thread {
                for n in 0..<perSender { loop.send(.found([QueuedFile(RelativePath("s\(sender)/f\(n)"))])) }
                done.leave()
            }.start()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(spinUntil { loop.snapshot.steps == 1 + senders * perSender })
        #expect(!effects.overlapped, "two senders stepped the owner at once")
        let claims = effects.taken.compactMap { effect -> RelativePath? in
            if case .claim(let path) = effect { return path }
            return nil
        }
        #expect(Set(claims).count == senders * perSender, "every file found was claimed exactly once")
        #expect(claims.count == senders * perSender)
        // The stop ends once every claim it cancels has reported back.
        loop.send(.stop(grace: 0))
        for path in claims { loop.send(.claimed(path, .cancelled)) }
        loop.waitUntilEnded()
    }

    @Test func theTimerTicksAtTheDeadlineWithNoOtherEvent() {
        let loop = loop()
        let effects = Effects()
        loop.start(ProfileState(seed: 1), name: "t") { effects.perform($0) }
        let path = RelativePath("late.bin")
        loop.send(.recovered(files: [], retries: [RetryEntry(path: path, due: Date().addingTimeInterval(0.05))], ignoredDirectories: []))
        #expect(spinUntil { effects.taken.contains(.moveBack(path)) }, "the retry came due with nothing else sent")
        loop.send(.stop(grace: 0))
        loop.send(.movedBack(path, to: nil))
        loop.waitUntilEnded()
    }

    @Test func eventsSentBeforeTheStartAreSteppedWhenItStarts() {
        let loop = loop()
        let effects = Effects()
        loop.send(.recovered(files: [QueuedFile(RelativePath("a"))], retries: [], ignoredDirectories: []))
        #expect(loop.snapshot.steps == 0)
        loop.start(ProfileState(seed: 1), name: "t") { effects.perform($0) }
        #expect(loop.snapshot.steps == 1)
        #expect(effects.taken.contains(.claim(RelativePath("a"))))
        loop.send(.stop(grace: 0))
        loop.send(.claimed(RelativePath("a"), .cancelled))
        loop.waitUntilEnded()
    }
}
