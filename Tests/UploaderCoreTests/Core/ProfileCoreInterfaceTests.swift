import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderTransfer
@testable import UploaderDecisions
@testable import UploaderCore

/// `interfaces`: a route by an interface not in the list pauses the profile as an outage does
/// (uploads aborted, no attempt spent, one log line naming it); every network change looks again.
@Suite("Allowed interfaces")
struct ProfileCoreInterfaceTests {
    static func profile(_ interfaces: Set<String> = ["eth0"], mode: ProfilePolicy.Mode = .daemon) -> EmbeddedProfile {
        var policy = ProfilePolicy(mode: mode, concurrency: 2, claimAhead: 2, maxAttempts: 5, backoff: 30, maxBackoff: 3600)
        policy.interfaces = interfaces
        return EmbeddedProfile(policy: policy)
    }

    @Test func nothingStartsBeforeTheFirstLookupSaysTheRouteIsAllowed() {
        var p = Self.profile()
        let start = p.send(.recovered(files: ["a", "b"].map { QueuedFile(RelativePath($0)) }, retries: [], ignoredDirectories: []))
        #expect(start.claims.isEmpty && start.contains(.checkRoute))
        #expect(p.send(.routeChecked(.via("eth0"))).claims.count == 2)
    }

    @Test func aRouteByAnotherInterfacePausesAbortsUploadsAndLogsTheInterfaceOnce() {
        var p = Self.profile()
        p.send(.recovered(files: ["a", "b", "c"].map { QueuedFile(RelativePath($0)) }, retries: [], ignoredDirectories: []))
        let uploads = p.claimAll(p.send(.routeChecked(.via("eth0")))).uploads
        #expect(uploads.count == 2)
        let moved = p.send(.routeChecked(.via("wwan0")))
        #expect(moved.cancelled == uploads)
        #expect(p.state.pausedReason == .interface)
        let line = moved.logged("route to the destination leaves by an interface not allowed; profile paused, files stay queued")
        #expect(line.count == 1 && line.first?.metadata.contains(.init(key: "interface", value: "wwan0")) == true)
        // The cut uploads come back interrupted: queued again, no attempt counted.
        for path in uploads {
            #expect(p.send(.attempted(path, .outcome(.interrupted(connected: true), attempts: 0))).settlements
                        == [.interrupted(connected: true)])
            p.send(.settled(path, .requeued))
        }
        // Another change, the same foreign route: looked at again, no second line, nothing starts.
        #expect(p.send(.networkChanged).contains(.checkRoute))
        let again = p.send(.routeChecked(.via("wwan0")))
        #expect(again.logLines.isEmpty && again.claims.isEmpty)
        let back = p.send(.networkChanged)
        #expect(back.contains(.checkRoute))
        let resumed = p.send(.routeChecked(.via("eth0")))
        #expect(resumed.claims == [RelativePath("a")], "c is still claimed ahead, from before the move")
        #expect(resumed.logged("route to the destination leaves by an allowed interface again; resuming").count == 1)
        #expect(p.state.pausedReason == nil)
    }

    @Test func changesDuringALookupAskForOneMoreAfterIt() {
        var p = Self.profile()
        p.send(.recovered(files: [], retries: [], ignoredDirectories: []))
        #expect(p.send(.networkChanged).filter { $0 == .checkRoute }.isEmpty, "one lookup at a time")
        p.send(.networkChanged)
        #expect(p.send(.routeChecked(.via("eth0"))) == [.checkRoute])
    }

    @Test func aLookupThatCannotTellLetsUploadsFindOut() {
        var p = Self.profile()
        p.send(.recovered(files: [QueuedFile(RelativePath("a"))], retries: [], ignoredDirectories: []))
        #expect(p.send(.routeChecked(.unknown("no route"))).claims == [RelativePath("a")])
    }

    @Test func noListMeansNoLookup() {
        var p = Self.profile([])
        #expect(!p.recover(["a"]).contains(.checkRoute))
        #expect(!p.send(.networkChanged).contains(.checkRoute))
    }

    @Test func runOnceByAForeignInterfaceLeavesFilesQueuedAsWhenOffline() {
        var p = Self.profile(mode: .once)
        p.send(.recovered(files: [QueuedFile(RelativePath("a"))], retries: [], ignoredDirectories: []))
        let effects = p.send(.routeChecked(.via("wwan0")))
        #expect(effects.claims.isEmpty && effects.contains(.drained))
        #expect(p.state.totals.leftQueuedOffline, "exit 69, as when the destination is unreachable")
    }
}
