import Foundation
import Synchronization
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderSpool

/// Retention sweeps sent/ while a move into it is under way, and deletes the file's new names
/// (the file is old, or sent/ over its bytes) at the worst instant. The move still ends: the
/// file never stays in the outbox with its `sent` record, nor without a record.
@Suite struct SimDiskRetentionDuringMoveTests {
    /// Between the move's links and the removal of its outbox name: the name still goes, though
    /// it can no longer be compared with the new one (noJournal seed 5001002).
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aMoveWhoseNewNamesRetentionDeletedStillRemovesItsOutboxName(_ model: SimDisk.Model) throws {
        let scenario = try SimDiskLifecycleTests.Scenario(model)
        let disk = scenario.disk
        let swept = Mutex(false)
        disk.observeOperations { call, where_, code in
            guard call == "link", code == 0, where_.hasSuffix("/spool/sent/a.bin.manifest.json"), !swept.withLock({ $0 }) else { return }
            swept.withLock { $0 = true }
            try? disk.remove("/spool/sent/a.bin")
            try? disk.remove("/spool/sent/a.bin.manifest.json")
        }
        try scenario.finish()
        #expect(swept.withLock { $0 }, "the scenario reached the instant after the links")
        #expect(disk.names(in: "/spool/outbox") == [".upl-tmp"], "nothing of the file is left in the outbox to be sent again")
    }

    /// A move cut after its links is finished by the file's next claim: the claim's link finds the
    /// name taken, and by the time it looks at that name retention has deleted it. The claim
    /// links the file again (journalled seed 5004981).
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aClaimFinishingAMoveIntoSentLinksAgainANameRetentionFreedMeanwhile(_ model: SimDisk.Model) throws {
        let scenario = try SimDiskLifecycleTests.Scenario(model)
        let (disk, claimer, path) = (scenario.disk, scenario.claimer, scenario.path)
        _ = try scenario.recordMove(to: .sent, linked: true)
        let swept = Mutex(false)
        disk.observeOperations { call, where_, code in
            guard call == "link", code == EEXIST, where_.hasSuffix("/spool/sent/a.bin"), !swept.withLock({ $0 }) else { return }
            swept.withLock { $0 = true }
            try? disk.remove("/spool/sent/a.bin")
            try? disk.remove("/spool/sent/a.bin.manifest.json")
        }
        let outcome = claimer.claim(path, now: SimDiskTesting.start)
        #expect(swept.withLock { $0 }, "the scenario reached the instant between the refused link and the look")
        guard case .finishedByRecovery(.sent, let target, _, _) = outcome else {
            Issue.record("the claim ends as \(outcome), not as a finished move into sent/")
            return
        }
        #expect(target == path)
        #expect(disk.contents("/spool/sent/a.bin") == SimDiskLifecycleTests.payload)
        #expect(disk.exists(path: "/spool/sent/a.bin.manifest.json"))
        #expect(disk.names(in: "/spool/outbox") == [".upl-tmp"], "nothing of the file is left in the outbox")
    }

    /// Retention meets the names a move into sent/ cut after its links left there, while the claim
    /// that finishes the move runs: the claim links the file again between retention's two
    /// unlinks, and the file stayed in sent/ without its manifest. Retention leaves the names of
    /// a move whose record is still in the outbox (noJournal seed 6008859).
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func retentionLeavesTheNamesOfAMoveStillToBeFinished(_ model: SimDisk.Model) throws {
        let scenario = try SimDiskLifecycleTests.Scenario(model)
        let disk = scenario.disk
        _ = try scenario.recordMove(to: .sent, linked: true)
        let claimed = Mutex(false)
        let claimer = scenario.claimer
        disk.observeOperations { call, where_, code in
            // Retention's first unlink: the claim finishing the move runs in that instant.
            guard call == "unlink", code == 0, where_ == "/spool/sent/a.bin", !claimed.withLock({ $0 }) else { return }
            claimed.withLock { $0 = true }
            _ = claimer.claim(RelativePath("a.bin"), now: SimDiskTesting.start)
        }
        let retention = SimDiskRetentionTests.retention(scenario.spool, keep: 1, keepBytes: 0)
        _ = retention.sweep(now: SimDiskTesting.start.addingTimeInterval(3600))
        disk.observeOperations(nil)
        if !claimed.withLock({ $0 }) { _ = claimer.claim(RelativePath("a.bin"), now: SimDiskTesting.start) }
        #expect(SimDiskRetentionTests.unpaired(disk).isEmpty, "a name in sent/ without its partner")
        #expect(!disk.exists(path: "/spool/outbox/a.bin") && !disk.exists(path: "/spool/outbox/a.bin.manifest.json"))
        _ = retention.sweep(now: SimDiskTesting.start.addingTimeInterval(3600))
        #expect(disk.names(in: "/spool/sent").isEmpty, "the finished move's names are retention's again")
    }
}
