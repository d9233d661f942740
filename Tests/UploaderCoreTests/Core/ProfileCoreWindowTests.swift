import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderTransfer
@testable import UploaderDecisions
@testable import UploaderCore

/// `upload_window`: outside every window nothing starts, uploads in flight run to their end,
/// and the owner wakes at the opening by its own deadline, never by polling.
@Suite("Upload windows")
struct ProfileCoreWindowTests {
    static let utc = TimeZone(identifier: "UTC")!

    /// The embedded profile starts at 2027-01-15 08:00 UTC.
    static func profile(_ windows: String, mode: ProfilePolicy.Mode = .daemon, concurrency: Int = 1) throws -> EmbeddedProfile {
        var policy = ProfilePolicy(mode: mode, concurrency: concurrency, claimAhead: concurrency, maxAttempts: 5,
                                   backoff: 30, maxBackoff: 3600)
        policy.windows = try UploadWindows.parse(windows).get()
        policy.timeZone = utc
        return EmbeddedProfile(policy: policy)
    }

    @Test func outsideEveryWindowNothingStartsAndTheOwnerWakesAtTheOpening() throws {
        var p = try Self.profile("22:00-06:00 12:00-13:00")
        let start = p.recover(["a", "b"])
        #expect(start.claims.isEmpty && start.uploads.isEmpty)
        #expect(p.state.pausedReason == .outsideWindow)
        #expect(start.logLines.first { $0.message.hasPrefix("outside every upload window") }?.metadata
                    .contains(.init(key: "next_window_opens_at", value: "2027-01-15T12:00:00Z")) == true)
        #expect(ProfileCore.nextDeadline(p.state, policy: p.policy, now: p.now) == 4.0 * 3600, "no polling: one wake, at 12:00")
        let opened = p.advanceToNextDeadline()
        #expect(opened.claims == [RelativePath("a")])
        #expect(p.state.pausedReason == nil)
        #expect(opened.logged("upload window open; uploads start").count == 1)
        #expect(ProfileCore.nextDeadline(p.state, policy: p.policy, now: p.now) == 3600.0, "and once more at 13:00, when it closes")
    }

    @Test func anUploadInFlightWhenTheWindowClosesRunsToItsEnd() throws {
        var p = try Self.profile("07:00-08:30")
        let start = p.recover(["a", "b"])
        #expect(start.uploads == [RelativePath("a")])
        #expect(start.claims == [RelativePath("a"), RelativePath("b")], "one claim ahead per slot")
        p.send(.claimed(RelativePath("b"), .ready))
        let closing = p.advance(by: 1800)
        #expect(closing.cancelled.isEmpty, "not aborted")
        #expect(closing.contains(.release(RelativePath("b"))), "the claimed one is let go, as in a pause")
        #expect(p.state.pausedReason == .outsideWindow)
        let done = p.send(.attempted(RelativePath("a"), .outcome(.delivered(status: 201))))
        #expect(done.settlements.count == 1)
        p.send(.settled(RelativePath("a"), .filed(.sent, RelativePath("a"), retryDue: nil)))
        #expect(p.effects.uploads == [RelativePath("a")], "b waits for tomorrow's window")
        #expect(ProfileCore.nextDeadline(p.state, policy: p.policy, now: p.now) == 22.5 * 3600.0)
    }

    @Test func aWallClockSetBackOutOfTheWindowClosesIt() throws {
        var p = try Self.profile("08:00-09:00", concurrency: 2)
        #expect(p.recover(["a"]).uploads == [RelativePath("a")])
        let back = p.jumpWall(by: -1800)
        #expect(p.state.pausedReason == .outsideWindow, "07:30 is outside the window")
        #expect(back.logged("outside every upload window; uploads wait until it opens").count == 1)
        let found = p.send(.found([QueuedFile(RelativePath("b"))]))
        #expect(found.claims.isEmpty && found.uploads.isEmpty, "nothing starts at 07:30")
        #expect(ProfileCore.nextDeadline(p.state, policy: p.policy, now: p.now) == 1800.0, "and the owner wakes at 08:00")
        #expect(p.advanceToNextDeadline().claims == [RelativePath("b")])
    }

    @Test func aWindowThatWrapsPastMidnightIsOpenAtOneInTheMorning() throws {
        var p = try Self.profile("22:00-02:00")
        p.recover(["a"])
        #expect(p.state.pausedReason == .outsideWindow)
        #expect(p.advance(by: 17 * 3600).claims == [RelativePath("a")], "01:00 the next day")
    }

    @Test func retriesDueOutsideTheWindowWaitForIt() throws {
        var p = try Self.profile("09:00-10:00")
        let retry = RetryEntry(path: RelativePath("r"), due: p.now.wall.addingTimeInterval(60))
        p.send(.recovered(files: [], retries: [retry], ignoredDirectories: []))
        #expect(p.advance(by: 120).moveBacks.isEmpty)
        #expect(ProfileCore.nextDeadline(p.state, policy: p.policy, now: p.now) == 3600.0 - 120)
        #expect(p.advanceToNextDeadline().moveBacks == [RelativePath("r")])
    }

    @Test func runOnceOutsideItsWindowsStartsNothingSaysWhenTheNextOpensAndEndsCleanly() throws {
        var p = try Self.profile("22:00-06:00", mode: .once)
        let due = RetryEntry(path: RelativePath("r"), due: p.now.wall.addingTimeInterval(-60))
        let effects = p.send(.recovered(files: [QueuedFile(RelativePath("a"))], retries: [due], ignoredDirectories: []))
        #expect(effects.claims.isEmpty && effects.moveBacks.isEmpty)
        #expect(effects.contains(.drained))
        let lines = effects.logLines.filter { $0.message.hasPrefix("outside every upload window") }
        #expect(lines.count == 1)
        #expect(lines.first?.metadata.contains(.init(key: "next_window_opens_at", value: "2027-01-15T22:00:00Z")) == true)
        #expect(!p.state.totals.leftQueuedOffline, "exit 0, not 69")
    }
}
