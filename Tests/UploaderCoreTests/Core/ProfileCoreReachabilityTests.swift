import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// Offline and back: one outage is one pause, one log line and one probe sequence, whatever
/// the number of uploads that ran into it; a stale "all good" never un-pauses anything.
@Suite("Reachability is one value in the owner's state")
struct ProfileCoreReachabilityTests {
    /// Online means uploads start when they can: the old race left a profile paused while its monitor said online.
    static func checkOnlineMeansNotPaused(_ p: EmbeddedProfile) {
        if p.state.reachability.isOnline && p.state.phase == .running {
            #expect(p.state.files.ready.isEmpty || p.state.files.slots.count == p.policy.concurrency,
                    "online, a free slot and a claimed file waiting: paused while online")
        } else if case .offline = p.state.reachability {
            #expect(p.state.probing != nil || ProfileCore.nextDeadline(p.state, policy: p.policy, now: p.now) != nil,
                    "offline with no probe coming: it would never resume")
        }
    }

    @Test func sixteenUploadsFailingAtOnceMakeOneOutage() {
        var p = EmbeddedProfile.daemon(concurrency: 16)
        let names = (0..<16).map { "f\($0)" }
        let started = p.recover(names)
        #expect(started.uploads.count == 16)
        var effects: [ProfileEffect] = []
        for path in started.uploads { effects += p.send(.attempted(path, .outcome(.unreachable(reason: "Connection refused")))) }
        #expect(effects.logged("destination unreachable; profile paused, files stay queued").count == 1)
        #expect(effects.cancelled.count == 15, "the others are aborted once, by the first")
        #expect(effects.probes.isEmpty, "the first probe waits a second")
        #expect(effects.settlements == Array(repeating: .unreachable(reason: "Connection refused"), count: 16))
        #expect(p.advance(by: 1).probes.count == 1)
        #expect(p.state.outages == 1)
    }

    @Test func aDestinationBackAfterAShortOutageIsUsedWithinTwoSeconds() {
        var p = EmbeddedProfile.daemon(concurrency: 16)
        let started = p.recover((0..<16).map { "f\($0)" })
        for path in started.uploads { p.send(.attempted(path, .outcome(.unreachable(reason: "refused")))) }
        for path in started.uploads { p.send(.settled(path, .requeued)) }
        let down = p.now.mono
        let serverBackAt = down + 6
        var resumedAt: Double?
        while resumedAt == nil && p.now.mono < down + 60 {
            let effects = p.advanceToNextDeadline()
            for ticket in effects.probes {
                let answer = p.send(.probed(ticket, problem: p.now.mono >= serverBackAt ? nil : "refused"))
                if !answer.claims.isEmpty { resumedAt = p.now.mono }
            }
            Self.checkOnlineMeansNotPaused(p)
        }
        let late = (resumedAt ?? .infinity) - serverBackAt
        #expect(late >= 0 && late <= 2, "resumed \(late) s after the server came back")
    }

    @Test func probesBackOffToThirtySecondsDuringALongOutage() {
        var p = EmbeddedProfile.daemon()
        p.recover(["a"])
        p.send(.attempted(RelativePath("a"), .outcome(.unreachable(reason: "refused"))))
        var times: [Double] = []
        let start = p.now.mono
        while p.now.mono < start + 600 {
            for ticket in p.advanceToNextDeadline().probes {
                times.append(p.now.mono - start)
                p.send(.probed(ticket, problem: "refused"))
            }
        }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(times.first == 1)
        #expect(gaps.allSatisfy { $0 >= 1 && $0 <= 30 })
        #expect(gaps.suffix(5).allSatisfy { $0 == 30 }, "\(gaps)")
        #expect(zip(gaps.dropFirst(), gaps).allSatisfy { $0 >= $1 }, "never shorter again within one outage")
    }

    /// The race of v0.1: a probe that began before an outage answers "reachable" after the
    /// outage was reported. Here every interleaving is forced by hand.
    @Test func aProbeSentBeforeTheOutageCannotEndIt() {
        var p = EmbeddedProfile.daemon(concurrency: 2)
        let started = p.recover(["a", "b", "c"])
        let early = p.send(.networkChanged).probes
        #expect(early.count == 1)
        // The upload fails after the probe went out…
        p.send(.attempted(started.uploads[0], .outcome(.unreachable(reason: "refused"))))
        #expect(!p.state.reachability.isOnline)
        Self.checkOnlineMeansNotPaused(p)
        // …and the probe's "all good" arrives afterwards: it says nothing about this outage.
        let stale = p.send(.probed(early[0], problem: nil))
        #expect(!p.state.reachability.isOnline)
        #expect(stale.probes.count == 1, "asked again at once")
        Self.checkOnlineMeansNotPaused(p)
        let fresh = p.send(.probed(stale.probes[0], problem: nil))
        #expect(p.state.reachability.isOnline)
        #expect(!fresh.uploads.isEmpty || !fresh.claims.isEmpty, "work starts the moment it is back")
        Self.checkOnlineMeansNotPaused(p)
    }

    @Test func aProbeThatSucceedsBeforeTheFailureArrivesLeavesTheProfileOfflineWithAProbeComing() {
        var p = EmbeddedProfile.daemon(concurrency: 2)
        let started = p.recover(["a", "b"])
        let probe = p.send(.networkChanged).probes[0]
        p.send(.probed(probe, problem: nil))
        #expect(p.state.reachability.isOnline)
        p.send(.attempted(started.uploads[0], .outcome(.unreachable(reason: "refused"))))
        #expect(!p.state.reachability.isOnline)
        Self.checkOnlineMeansNotPaused(p)
        #expect(p.advance(by: 1).probes.count == 1)
    }

    @Test func aNetworkChangeDuringAProbeAsksAgainWhenItReturns() {
        var p = EmbeddedProfile.daemon()
        p.recover(["a"])
        p.send(.attempted(RelativePath("a"), .outcome(.unreachable(reason: "refused"))))
        let first = p.advance(by: 1).probes
        #expect(p.send(.networkChanged).probes.isEmpty, "one probe at a time")
        let again = p.send(.probed(first[0], problem: "refused")).probes
        #expect(again.count == 1, "the change is not lost")
    }

    @Test func flappingNeverLeavesItPausedWhileOnline() {
        var rng = SplitMix64(seed: 42)
        var p = EmbeddedProfile.daemon(concurrency: 3)
        var pendingUploads = p.recover((0..<30).map { "f\($0)" }).uploads
        var pendingProbes: [ProbeTicket] = []
        var linkUp = true
        for _ in 0..<2000 {
            var effects: [ProfileEffect] = []
            switch rng.next() % 5 {
            case 0:
                linkUp.toggle()
                effects = p.send(.networkChanged)
            case 1 where !pendingProbes.isEmpty:
                effects = p.send(.probed(pendingProbes.removeFirst(), problem: linkUp ? nil : "no route"))
            case 2 where !pendingUploads.isEmpty:
                let path = pendingUploads.removeFirst()
                let outcome: AttemptOutcome = linkUp ? .retryable(reason: "HTTP 503", retryAfter: 1) : .unreachable(reason: "no route")
                effects = p.send(.attempted(path, .outcome(outcome)))
                for case .settle(let settled, let s) in effects {
                    if case .retry(_, let due) = s {
                        effects += p.send(.settled(settled, .filed(.retry, settled, retryDue: due)))
                    } else {
                        effects += p.send(.settled(settled, .requeued))
                    }
                }
            default:
                effects = p.advance(by: Double(rng.next() % 400) / 1000)
            }
            effects += p.claimAll(effects)
            for case .moveBack(let path) in effects { effects += p.claimAll(p.send(.movedBack(path, to: QueuedFile(path)))) }
            pendingUploads += effects.uploads
            pendingProbes += effects.probes
            Self.checkOnlineMeansNotPaused(p)
        }
        // Link up for good: everything in flight fails over, probes say yes, and work resumes.
        linkUp = true
        for _ in 0..<200 where !p.state.reachability.isOnline {
            var effects = p.advanceToNextDeadline()
            for ticket in pendingProbes + effects.probes { effects += p.send(.probed(ticket, problem: nil)) }
            pendingProbes = []
        }
        #expect(p.state.reachability.isOnline)
    }
}
