import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderSpool

/// A move into retry/ cut after the file's outbox name went and before its record's: the producer
/// put a new file under the name. The start-up's claim finishes the old file's move and leaves the
/// new file to be claimed on its own; it never files the new file in retry/ under the old record,
/// as failed without an attempt, beside the old one with the same id (journalled seed 5002713:
/// `uploader retry` took one back and the other's `on_failed` counted as never run).
@Suite struct SimDiskNewFileAfterCutMoveToRetryTests {
    @Test(arguments: [SimDisk.Model.noJournal, .journalled], [Manifest.State.failed, .retry])
    func theNewFileIsClaimedOnItsOwnAndTheOldOneStaysInRetryWithItsRecord(_ model: SimDisk.Model, _ ending: Manifest.State) throws {
        let scenario = try SimDiskLifecycleTests.Scenario(model, ending: ending)
        let disk = scenario.disk
        let record = try scenario.recordMove(to: .retry, linked: true)
        try disk.remove("/spool/outbox/a.bin")
        let newer = SimDiskTesting.bytes("the producer's new file under the same name")
        disk.createFile("/spool/outbox/a.bin", data: newer, sync: true)

        let outcome = scenario.claimer.claim(scenario.path, now: SimDiskTesting.start)
        guard case .finishedByRecovery(.retry, let target, _, let another) = outcome else {
            Issue.record("the claim ends as \(outcome), not as the old file's move finished")
            return
        }
        #expect(target == scenario.path && another)
        #expect(disk.contents("/spool/retry/a.bin") == SimDiskLifecycleTests.payload)
        let kept = try Manifest.decode(Data(disk.contents("/spool/retry/a.bin.manifest.json") ?? []))
        #expect(kept.id == record.id && kept.state == ending)
        #expect(disk.names(in: "/spool/retry").sorted() == ["a.bin", "a.bin.manifest.json"], "nothing else filed in retry/")
        #expect(!disk.exists(path: "/spool/outbox/a.bin.manifest.json"), "the old record has left the outbox")

        guard case .ready(let claimed) = scenario.claimer.claim(scenario.path, now: SimDiskTesting.start) else {
            Issue.record("the new file is not claimed on its own")
            return
        }
        #expect(claimed.manifest.id != record.id && claimed.manifest.state == .queued)
        #expect(claimed.manifest.size == Int64(newer.count))
    }
}
