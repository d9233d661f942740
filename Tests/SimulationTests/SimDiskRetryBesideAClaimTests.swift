import Foundation
import Synchronization
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderSpool

/// `uploader retry` moves a file back from retry/ while a claim of it waits for the retry-move
/// lock, holding the record it read before: that of a move into retry/ cut after its links,
/// which another finisher has ended meanwhile. The claim must not finish that move again with
/// the record the move back left in the outbox, or the file goes back into retry/ beside a
/// `queued` record and is never sent (journalled seed 19000222 of the simulator:
/// `retry/f21--rf ends as queued`). Under the lock the claim reads the record again, and claims
/// what it finds; and one that found the name empty claims the file put back meanwhile.
@Suite struct SimDiskRetryBesideAClaimTests {
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aClaimWaitingForTheLockDoesNotFinishAMoveTheRetryCommandUndid(_ model: SimDisk.Model) throws {
        let scenario = try SimDiskLifecycleTests.Scenario(model, ending: .failed)
        let (disk, spool, lifecycle, path) = (scenario.disk, scenario.spool, scenario.lifecycle, scenario.path)
        _ = try scenario.recordMove(to: .retry, linked: true)
        let movedBack = try Self.retryCommandWhenTheLockIsAsked(on: disk, path) {
            // Meanwhile another finisher ends the cut move first.
            guard case .success(let record) = spool.readManifest(for: path, in: .outbox) else { return }
            try? lifecycle.dropOutboxRecord(of: path, manifest: record, movedTo: path, in: .retry)
        }
        let outcome = scenario.claimer.claim(path, now: SimDiskTesting.start)
        #expect(movedBack.came, "the scenario reached the instant the claim asks for the lock")
        #expect(disk.names(in: "/spool/retry").filter { !$0.hasPrefix(".") }.isEmpty, "nothing went back into retry/: \(outcome)")
        guard case .ready(let claimed) = outcome else {
            Issue.record("the claim ends as \(outcome), not with the file ready to be sent")
            return
        }
        #expect(claimed.manifest.state == .queued)
        #expect(disk.contents("/spool/outbox/a.bin") == SimDiskLifecycleTests.payload)
    }

    /// The same instant for the start-up's recovery, which finishes a move into retry/ cut after
    /// the file's outbox name went: the move back found the record in the outbox, and the file is
    /// claimed as it is now, never filed in retry/ again under the record the move back wrote.
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func recoveryWaitingForTheLockDoesNotFinishAMoveTheRetryCommandUndid(_ model: SimDisk.Model) throws {
        let scenario = try SimDiskLifecycleTests.Scenario(model, ending: .failed)
        let (disk, spool, lifecycle, path) = (scenario.disk, scenario.spool, scenario.lifecycle, scenario.path)
        _ = try scenario.recordMove(to: .retry, linked: true)
        try disk.remove("/spool/outbox/a.bin")
        let movedBack = try Self.retryCommandWhenTheLockIsAsked(on: disk, path)
        let files = SimDiskTesting.recovery(spool, lifecycle).scanOutbox().files
        #expect(movedBack.came, "the scenario reached the instant recovery asks for the lock")
        #expect(disk.names(in: "/spool/retry").filter { !$0.hasPrefix(".") }.isEmpty, "nothing went back into retry/")
        #expect(files.contains(path))
        #expect(disk.contents("/spool/outbox/a.bin") == SimDiskLifecycleTests.payload)
        let record = disk.contents("/spool/outbox/a.bin.manifest.json").flatMap { try? Manifest.decode(Data($0)) }
        #expect(record?.state == .queued)
    }

    /// A claim finds the name empty (the file waits in retry/), and `uploader retry` puts the file
    /// back, record first, before the claim drops what it took for a vanished file's record: the
    /// claim, under the lock, sees the file there and claims it with the record it came back with,
    /// its attempt kept (journalled seed 70007495 of the simulator: the record went, the file was
    /// claimed afresh under the same key with no attempt, and the server had seen two requests
    /// for the one the record held).
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aClaimThatFoundTheNameEmptyClaimsTheFileTheRetryCommandPutBackMeanwhile(_ model: SimDisk.Model) throws {
        let scenario = try SimDiskLifecycleTests.Scenario(model, ending: .failed)
        let (disk, lifecycle, path) = (scenario.disk, scenario.lifecycle, scenario.path)
        let record = try scenario.recordMove(to: .retry, linked: false)
        try lifecycle.completeMove(path, manifest: record, to: .retry, as: path)
        #expect(!disk.exists(path: "/spool/outbox/a.bin") && !disk.exists(path: "/spool/outbox/a.bin.manifest.json"))
        let movedBack = try Self.retryCommandWhenTheLockIsAsked(on: disk, path)
        let outcome = scenario.claimer.claim(path, now: SimDiskTesting.start)
        #expect(movedBack.came, "the scenario reached the instant the claim asks for the lock")
        guard case .ready(let claimed) = outcome else {
            Issue.record("the claim ends as \(outcome), not with the file put back ready to be sent")
            return
        }
        #expect(claimed.manifest.id == record.id)
        #expect(claimed.manifest.attempts.count == record.attempts.count, "the attempt the record held is kept")
        #expect(disk.exists(path: "/spool/outbox/a.bin.manifest.json"))
        #expect(disk.contents("/spool/outbox/a.bin") == SimDiskLifecycleTests.payload)
    }

    /// Whether the instant a test lays out came.
    final class Instant: Sendable {
        let flag = Mutex(false)
        var came: Bool { flag.withLock { $0 } }
    }

    /// The first time a process asks for the retry-move lock, `before` runs, then `uploader retry`
    /// moves `path` back as its own process would. Says whether that instant came.
    static func retryCommandWhenTheLockIsAsked(on disk: SimDisk, _ path: RelativePath,
                                               before: @escaping @Sendable () -> Void = {}) throws -> Instant {
        let (_, operatorLifecycle, _) = try SimDiskTesting.spool(on: disk)
        let movedBack = Instant()
        disk.observeLocks { lock in
            guard lock.hasSuffix(RetryMoveLock.name.display), !movedBack.came else { return }
            movedBack.flag.withLock { $0 = true }
            disk.observeLocks(nil)
            before()
            _ = try? operatorLifecycle.moveBack(fromRetry: path, resetBackoff: true, locked: .exclusive)
        }
        return movedBack
    }
}
