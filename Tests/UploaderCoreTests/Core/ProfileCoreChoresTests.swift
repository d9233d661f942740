import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderCore

/// Passes over sent/ (`keep_sent`, `keep_sent_bytes`) and periodic rescans are timed by the core,
/// on the clock it is given: a tick past their time starts them, never one before.
@Suite("Retention passes and rescans are the core's chores")
struct ProfileCoreChoresTests {
    private static func daemon(retention: RetentionPacing? = nil, rescan: TimeInterval? = nil) -> EmbeddedProfile {
        var policy = ProfilePolicy(mode: .daemon, concurrency: 1, maxAttempts: 3, backoff: 30, maxBackoff: 3600)
        policy.retention = retention
        policy.rescanEvery = rescan
        return EmbeddedProfile(policy: policy)
    }

    private func sweeps(_ effects: [ProfileEffect]) -> Int { effects.filter { $0 == .sweepSent }.count }
    private func rescans(_ effects: [ProfileEffect]) -> Int { effects.filter { $0 == .rescan }.count }

    @Test func theFirstPassComesWithTheStartUpScanAndTheNextAnIntervalAfterItEnded() {
        var p = Self.daemon(retention: RetentionPacing(every: 100))
        #expect(sweeps(p.send(.recovered(files: [], retries: [], ignoredDirectories: []))) == 1)
        #expect(sweeps(p.advance(by: 500)) == 0, "one pass at a time")
        #expect(p.send(.sentSwept).isEmpty)
        #expect(ProfileCore.nextDeadline(p.state, policy: p.policy, now: p.now) == 100)
        #expect(sweeps(p.advance(by: 99.9)) == 0, "not before its time")
        #expect(sweeps(p.advance(by: 0.1)) == 1)
    }

    @Test func deliveriesOfATenthOfTheBoundBringThePassForwardButNotWithinAMinute() {
        var p = Self.daemon(retention: RetentionPacing(every: 600, afterDelivered: 150))
        p.recover(["a", "b"])
        p.send(.sentSwept)
        // Two deliveries of 100 bytes each (the embedded reports' size).
        for name in ["a", "b"] {
            p.send(.attempted(RelativePath(name), .outcome(.delivered(status: 201))))
            p.send(.settled(RelativePath(name), .filed(.sent, RelativePath(name), retryDue: nil)))
        }
        #expect(ProfileCore.nextDeadline(p.state, policy: p.policy, now: p.now) == 60)
        #expect(sweeps(p.advance(by: 59)) == 0)
        #expect(sweeps(p.advance(by: 1)) == 1, "a minute after the last pass, not the ten")
    }

    @Test func aRescanComesEveryIntervalAfterTheLastEndedAndNotWhileStopping() {
        var p = Self.daemon(rescan: 300)
        #expect(rescans(p.send(.recovered(files: [], retries: [], ignoredDirectories: []))) == 0, "the start-up scan was one")
        #expect(rescans(p.advance(by: 299)) == 0)
        #expect(rescans(p.advance(by: 1)) == 1)
        #expect(rescans(p.advance(by: 1000)) == 0, "one at a time")
        p.send(.found([QueuedFile(RelativePath("late"))]))
        p.send(.rescanned)
        #expect(ProfileCore.nextDeadline(p.state, policy: p.policy, now: p.now) == 300)
        p.send(.stop(grace: 5))
        #expect(rescans(p.advance(by: 400)) == 0)
    }

    @Test func runOnceAndProfilesWithoutThemHaveNoChores() {
        var once = EmbeddedProfile(policy: ProfilePolicy(mode: .once, concurrency: 1, maxAttempts: 3, backoff: 1, maxBackoff: 2))
        once.send(.recovered(files: [], retries: [], ignoredDirectories: []))
        var plain = Self.daemon()
        plain.send(.recovered(files: [], retries: [], ignoredDirectories: []))
        #expect(plain.advance(by: 100_000).isEmpty)
        #expect(ProfileCore.nextDeadline(plain.state, policy: plain.policy, now: plain.now) == nil)
        #expect(!(once.effects + plain.effects).contains { $0 == .sweepSent || $0 == .rescan })
    }

    @Test func theRunnersPolicyTakesTheIntervalsOfTheConfigInADaemonOnly() throws {
        var profile = Profile(name: "p", spool: SpoolPaths(root: "/nonexistent"),
                              destination: .http(URLTemplate(try Template(parsing: "http://127.0.0.1:1/{path}"))))
        profile.keepSent = 86_400
        profile.keepSentBytes = 10_000
        profile.rescan = 120
        let daemon = ProfilePolicy(profile: profile, mode: .daemon)
        #expect(daemon.retention == RetentionPacing(every: 600, afterDelivered: 1_000))
        #expect(daemon.rescanEvery == 120)
        let once = ProfilePolicy(profile: profile, mode: .once)
        #expect(once.retention == nil && once.rescanEvery == nil)
    }
}
