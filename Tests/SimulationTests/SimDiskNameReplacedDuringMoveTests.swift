import Foundation
import Synchronization
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderSpool

/// A move that has linked its file into retry/ finds, when it comes to remove the outbox name,
/// that the name leads to another file: another finisher of the same move took this one's name
/// away and the producer put a new file there. The new file stays; only this file's name goes
/// (journalled seed 4000743: the move unlinked the producer's new file, which was lost).
@Suite struct SimDiskNameReplacedDuringMoveTests {
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aMoveNeverRemovesAnotherFileThatTookTheOutboxName(_ model: SimDisk.Model) throws {
        let scenario = try SimDiskLifecycleTests.Scenario(model, ending: .retry)
        let disk = scenario.disk
        let newer = SimDiskTesting.bytes("the producer's new file under the same name")
        let replaced = Mutex(false)
        disk.injectFaults { site in
            // Between the file's link into retry/ and its manifest's: the name changes hands.
            guard site == .allocate, disk.exists(path: "/spool/retry/a.bin"), !replaced.withLock({ $0 }) else { return .none }
            replaced.withLock { $0 = true }
            try? disk.remove("/spool/outbox/a.bin")
            disk.createFile("/spool/outbox/a.bin", data: newer, sync: true)
            return .none
        }
        let target = try scenario.lifecycle.finish(scenario.path, manifest: scenario.manifest, to: .retry)
        #expect(replaced.withLock { $0 }, "the scenario reached the instant between the links and the unlink")
        #expect(target == scenario.path)
        #expect(disk.contents("/spool/retry/a.bin") == SimDiskLifecycleTests.payload)
        #expect(disk.contents("/spool/outbox/a.bin") == newer, "the producer's new file is still there")
    }
}
