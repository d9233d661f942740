import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderSpool

/// A move into retry/ or sent/ cut after the file's outbox name went and before its record's (a
/// crash, or the record's unlink refused): the producer put a new file under the name. The next
/// claim finishes the old file's move and leaves the new file to be claimed on its own.
/// - It never files the new file in retry/ under the old record, as failed without an attempt,
///   beside the old one with the same id (journalled seed 5002713: `uploader retry` took one back
///   and the other's `on_failed` counted as never run).
/// - It never takes the new file, of another size, for the delivered one changed after its upload
///   and claims it afresh over the old record, leaving the delivery in sent/ with its hook never
///   queued by the running daemon (journalled seed 50004771: `on_sent` never ran).
@Suite struct SimDiskNewFileAfterCutMoveTests {
    static let moves: [(Spool.Area, Manifest.State)] = [(.retry, .failed), (.retry, .retry), (.sent, .sent)]

    @Test(arguments: [SimDisk.Model.noJournal, .journalled], moves)
    func theNewFileIsClaimedOnItsOwnAndTheOldOneStaysWithItsRecord(_ model: SimDisk.Model, _ move: (Spool.Area, Manifest.State)) throws {
        let (area, ending) = move
        let scenario = try SimDiskLifecycleTests.Scenario(model, ending: ending)
        let disk = scenario.disk
        let record = try scenario.recordMove(to: area, linked: true)
        try disk.remove("/spool/outbox/a.bin")
        let newer = SimDiskTesting.bytes("the producer's new file under the same name")
        disk.createFile("/spool/outbox/a.bin", data: newer, sync: true)

        let outcome = scenario.claimer.claim(scenario.path, now: SimDiskTesting.start)
        guard case .finishedByRecovery(let filedIn, let target, _, let another) = outcome, filedIn == area else {
            Issue.record("the claim ends as \(outcome), not as the old file's move finished")
            return
        }
        #expect(target == scenario.path && another)
        let place = "/spool/\(area.rawValue)/a.bin"
        #expect(disk.contents(place) == SimDiskLifecycleTests.payload)
        let kept = try Manifest.decode(Data(disk.contents(place + ".manifest.json") ?? []))
        #expect(kept.id == record.id && kept.state == ending)
        #expect(disk.names(in: "/spool/\(area.rawValue)").sorted() == ["a.bin", "a.bin.manifest.json"], "nothing else filed there")
        #expect(!disk.exists(path: "/spool/outbox/a.bin.manifest.json"), "the old record has left the outbox")

        guard case .ready(let claimed) = scenario.claimer.claim(scenario.path, now: SimDiskTesting.start) else {
            Issue.record("the new file is not claimed on its own")
            return
        }
        #expect(claimed.manifest.id != record.id && claimed.manifest.state == .queued)
        #expect(claimed.manifest.size == Int64(newer.count))
    }
}
