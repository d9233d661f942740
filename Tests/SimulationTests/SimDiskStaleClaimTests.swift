import Foundation
import Synchronization
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderSpool

/// A claim finishes a move into retry/ that its record in the outbox names, while another
/// finisher (the live move, or a rescan) has meanwhile taken the file there, moved it back under
/// a free name, and the producer has put a new file under the name. The claim's move never links
/// that new file into retry/ (it is not the file the claim opened): the new file is claimed on its
/// own (noJournal seed 6007017: it was linked into retry/ and later sent, one file in two places).
@Suite struct SimDiskStaleClaimTests {
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aClaimNeverMovesANewFileThatTookTheNameOfTheFileItOpened(_ model: SimDisk.Model) throws {
        let scenario = try SimDiskLifecycleTests.Scenario(model, ending: .retry)
        let disk = scenario.disk
        let record = try scenario.recordMove(to: .retry, linked: false)
        let newer = SimDiskTesting.bytes("the producer's new file under the same name")
        let raced = Mutex(false)
        disk.observeOperations { call, where_, code in
            // The claim's first write: the record's directory made durable before the links.
            guard call == "fsync", code == 0, where_ == "/spool/outbox", !raced.withLock({ $0 }) else { return }
            raced.withLock { $0 = true }
            try? disk.link("/spool/outbox/a.bin", "/spool/retry/a.bin")
            try? disk.link("/spool/outbox/a.bin.manifest.json", "/spool/retry/a.bin.manifest.json")
            try? disk.remove("/spool/outbox/a.bin")
            try? disk.remove("/spool/outbox/a.bin.manifest.json")
            try? disk.link("/spool/retry/a.bin.manifest.json", "/spool/outbox/a.2.bin.manifest.json")
            try? disk.link("/spool/retry/a.bin", "/spool/outbox/a.2.bin")
            try? disk.remove("/spool/retry/a.bin")
            try? disk.remove("/spool/retry/a.bin.manifest.json")
            disk.createFile("/spool/outbox/a.bin", data: newer, sync: true)
        }
        let outcome = scenario.claimer.claim(scenario.path, now: SimDiskTesting.start)
        #expect(raced.withLock { $0 }, "the scenario reached the instant before the claim's links")
        #expect(!disk.exists(path: "/spool/retry/a.bin"), "the new file was linked into retry/")
        #expect(disk.contents("/spool/outbox/a.2.bin") == SimDiskLifecycleTests.payload)
        guard case .ready(let claimed) = outcome else {
            Issue.record("the new file is not claimed on its own: \(outcome)")
            return
        }
        #expect(claimed.manifest.id != record.id && claimed.manifest.size == Int64(newer.count))
    }
}
