import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderTransfer
@testable import UploaderCore

/// `order`: the start-up backlog, new arrivals and due retries all start in the configured
/// order (ties by name); files in flight are never preempted.
@Suite("Which waiting file starts next")
struct ProfileCoreOrderTests {
    static func profile(_ order: UploadOrder, concurrency: Int = 1) -> EmbeddedProfile {
        var policy = ProfilePolicy(mode: .daemon, concurrency: concurrency, claimAhead: concurrency, maxAttempts: 5,
                                   backoff: 30, maxBackoff: 3600)
        policy.order = order
        return EmbeddedProfile(policy: policy)
    }

    /// name, size, mtime (seconds): sizes and mtimes disagree, and two pairs tie.
    static let backlog: [QueuedFile] = [
        QueuedFile(RelativePath("c"), size: 300, mtimeNanos: 1_000),
        QueuedFile(RelativePath("a"), size: 100, mtimeNanos: 3_000),
        QueuedFile(RelativePath("d"), size: 100, mtimeNanos: 2_000),
        QueuedFile(RelativePath("b"), size: 200, mtimeNanos: 2_000),
    ]

    /// Answers every claim (those running already first) and upload as a healthy server would,
    /// until nothing is left; returns the upload order.
    static func drain(_ p: inout EmbeddedProfile, _ first: [ProfileEffect]) -> [String] {
        var pending = p.state.files.claims.map { ProfileEffect.claim($0) } + first.filter { if case .claim = $0 { false } else { true } }
        var order: [String] = []
        while !pending.isEmpty {
            let effect = pending.removeFirst()
            switch effect {
            case .claim(let path): pending += p.send(.claimed(path, .ready))
            case .upload(let path, _):
                order.append(path.description)
                pending += p.send(.attempted(path, .outcome(.delivered(status: 201))))
            case .settle(let path, _): pending += p.send(.settled(path, .filed(.sent, path, retryDue: nil)))
            default: break
            }
        }
        return order
    }

    @Test(arguments: [(UploadOrder.oldest, ["c", "b", "d", "a"]), (.newest, ["a", "b", "d", "c"]),
                      (.smallest, ["a", "d", "b", "c"]), (.largest, ["c", "b", "a", "d"])])
    func theBacklogStartsInOrderWithTiesByName(_ order: UploadOrder, _ expected: [String]) {
        var p = Self.profile(order)
        let first = p.send(.recovered(files: Self.backlog, retries: [], ignoredDirectories: []))
        #expect(Self.drain(&p, first) == expected)
        #expect(p.state.files.entries.isEmpty, "nothing is kept of a file that is gone")
    }

    /// One file per slot is claimed (hashed) ahead of the slot; it keeps its turn too.
    @Test func aNewArrivalGoesAheadOfTheBacklogButNeverPreemptsTheUploadInFlight() {
        var p = Self.profile(.newest)
        let started = p.claimAll(p.send(.recovered(files: Self.backlog, retries: [], ignoredDirectories: [])))
        #expect(started.uploads == [RelativePath("a")])
        let arrival = p.send(.found([QueuedFile(RelativePath("new"), size: 1, mtimeNanos: 9_000)]))
        #expect(arrival.cancelled.isEmpty && arrival.uploads.isEmpty, "a is not preempted")
        let after = p.send(.attempted(RelativePath("a"), .outcome(.delivered(status: 201))))
        #expect(p.state.files.claims == [RelativePath("b")], "claimed ahead before new arrived")
        #expect(Self.drain(&p, after) == ["b", "new", "d", "c"])
    }

    /// Claims ahead run in parallel and finish in any order (a bigger file hashes longer): a
    /// free slot waits for the better-ranked claim rather than let a later file overtake it.
    @Test func aClaimThatFinishesFirstDoesNotOvertakeABetterRankedOneStillRunning() {
        var policy = ProfilePolicy(mode: .daemon, concurrency: 1, claimAhead: 16, maxAttempts: 5, backoff: 30, maxBackoff: 3600)
        policy.order = .smallest
        var p = EmbeddedProfile(policy: policy)
        let start = p.send(.recovered(files: Self.backlog, retries: [], ignoredDirectories: []))
        #expect(start.claims == ["a", "d", "b", "c"].map { RelativePath($0) })
        #expect(p.send(.claimed(RelativePath("d"), .ready)).uploads.isEmpty, "d finished first, but a ranks before it")
        #expect(p.send(.claimed(RelativePath("c"), .ready)).uploads.isEmpty)
        #expect(p.send(.claimed(RelativePath("a"), .ready)).uploads == [RelativePath("a")])
        p.send(.attempted(RelativePath("a"), .outcome(.delivered(status: 201))))
        #expect(p.send(.recordRewritten(RelativePath("a"))).uploads == [RelativePath("d")])
        p.send(.attempted(RelativePath("d"), .outcome(.delivered(status: 201))))
        let next = p.send(.recordRewritten(RelativePath("d")))
        #expect(next.uploads.isEmpty, "b is still claiming and ranks before c")
        #expect(Self.drain(&p, next) == ["b", "c"])
    }

    /// A better-ranked claim that ends without a file (vanished) stops holding the slot back.
    @Test func aVanishedBetterRankedClaimLetsTheNextOneStart() {
        var policy = ProfilePolicy(mode: .daemon, concurrency: 1, claimAhead: 16, maxAttempts: 5, backoff: 30, maxBackoff: 3600)
        policy.order = .smallest
        var p = EmbeddedProfile(policy: policy)
        p.send(.recovered(files: Self.backlog, retries: [], ignoredDirectories: []))
        #expect(p.send(.claimed(RelativePath("d"), .ready)).uploads.isEmpty)
        #expect(p.send(.claimed(RelativePath("a"), .vanished)).uploads == [RelativePath("d")])
    }

    /// `order = newest`, one slot: x claiming (mtime `xAt`), y (2 000) and z (1 000) claimed and
    /// ready behind it.
    static func twoReadyBehindAClaim(xAt: Int64) -> EmbeddedProfile {
        var policy = ProfilePolicy(mode: .daemon, concurrency: 1, claimAhead: 16, maxAttempts: 5, backoff: 30, maxBackoff: 3600)
        policy.order = .newest
        var p = EmbeddedProfile(policy: policy)
        let files = [QueuedFile(RelativePath("x"), size: 1, mtimeNanos: xAt),
                     QueuedFile(RelativePath("y"), size: 1, mtimeNanos: 2_000),
                     QueuedFile(RelativePath("z"), size: 1, mtimeNanos: 1_000)]
        p.send(.recovered(files: files, retries: [], ignoredDirectories: []))
        p.send(.claimed(RelativePath("y"), .ready))
        p.send(.claimed(RelativePath("z"), .ready))
        return p
    }

    /// y vanished before a rescan's `lstat` (zeros: the oldest of all), z was written to (now 4 000).
    static let foundAgain = ProfileEvent.found([QueuedFile(RelativePath("y"), size: 0, mtimeNanos: 0),
                                                QueuedFile(RelativePath("z"), size: 2, mtimeNanos: 4_000)])

    /// A claimed file found again with other facts (written to, or gone before the scan's
    /// `lstat`) takes its new rank in the ready list: the slot goes to the file that ranks first
    /// now. The simulator found the list left out of order (noJournal seed 20261222, `orderWithinSlots`).
    @Test func aReadyFileFoundAgainWithANewRankTakesItsNewPlace() {
        var p = Self.twoReadyBehindAClaim(xAt: 3_000)
        #expect(p.state.files.ready == [RelativePath("y"), RelativePath("z")], "x ranks first and is still claiming")
        #expect(p.send(Self.foundAgain).uploads == [RelativePath("z")], "z ranks before x's claim now: it need not wait for it")
        #expect(p.state.files.ready == [RelativePath("y")])
    }

    /// The same with both behind the better claim: they swap places in the ready list.
    @Test func readyFilesFoundAgainWithNewRanksSwapPlaces() {
        var p = Self.twoReadyBehindAClaim(xAt: 9_000)
        p.send(Self.foundAgain)
        #expect(p.state.files.ready == [RelativePath("z"), RelativePath("y")])
        #expect(p.send(.claimed(RelativePath("x"), .vanished)).uploads == [RelativePath("z")])
    }

    @Test func aDueRetryTakesItsPlaceInTheOrder() {
        var p = Self.profile(.smallest)
        let retry = RetryEntry(path: RelativePath("r"), due: p.now.wall.addingTimeInterval(10))
        let start = p.send(.recovered(files: [QueuedFile(RelativePath("big"), size: 900)], retries: [retry], ignoredDirectories: []))
        #expect(start.claims == [RelativePath("big")])
        p.send(.found([QueuedFile(RelativePath("mid"), size: 500)]))
        #expect(p.advance(by: 10).moveBacks == [RelativePath("r")])
        p.send(.movedBack(RelativePath("r"), to: QueuedFile(RelativePath("r"), size: 5)))
        #expect(Self.drain(&p, []) == ["big", "r", "mid"], "r (5 bytes) before mid (500), though mid waited longer")
    }

    @Test func filesLetGoByAnOutageWaitInTheirPlaceAgain() {
        var p = Self.profile(.largest, concurrency: 2)
        let recovered = p.send(.recovered(files: Self.backlog, retries: [], ignoredDirectories: []))
        let first = p.claimAll(recovered)
        p.claimAll(first)
        #expect(first.uploads == [RelativePath("c"), RelativePath("b")])
        #expect(p.state.files.ready == [RelativePath("a"), RelativePath("d")])
        for path in first.uploads { p.send(.attempted(path, .outcome(.unreachable(reason: "refused")))) }
        for path in first.uploads { p.send(.settled(path, .requeued)) }
        #expect(p.state.files.waiting.paths.map(\.description) == ["c", "b", "a", "d"])
    }

    /// How fast is `bench/`'s (the backlog row); here, that one step over a large backlog picks the right files.
    @Test func aBacklogOfAHundredThousandFilesStartsWithTheNewestInOneStep() {
        var p = Self.profile(.newest, concurrency: 4)
        let files = (0..<100_000).map { QueuedFile(RelativePath("f\($0)"), size: Int64($0 % 977), mtimeNanos: Int64(($0 * 7919) % 100_000)) }
        // In place, as the owner's loop steps (no copy of the state per event).
        let effects = ProfileCore.step(&p.state, .recovered(files: files, retries: [], ignoredDirectories: []), policy: p.policy, now: p.now)
        #expect(effects.claims.count == 4)
        #expect(effects.claims.first == RelativePath("f82321"), "the newest: mtime 99,999")
    }
}
