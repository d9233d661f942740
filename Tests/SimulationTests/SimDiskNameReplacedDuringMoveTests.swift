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
        let disk = SimDiskTesting.disk(model)
        let (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
        let path = RelativePath("a.bin")
        let payload = SimDiskTesting.bytes("the payload")
        let newer = SimDiskTesting.bytes("the producer's new file under the same name")
        let record = try SimDiskTesting.begunAttempt(path, data: payload, ending: .retry, on: disk, spool, lifecycle, claimer)
        let replaced = Mutex(false)
        disk.injectFaults { site in
            // Between the file's link into retry/ and its manifest's: the name changes hands.
            guard site == .allocate, disk.exists(path: "/spool/retry/a.bin"), !replaced.withLock({ $0 }) else { return .none }
            replaced.withLock { $0 = true }
            try? disk.remove("/spool/outbox/a.bin")
            disk.createFile("/spool/outbox/a.bin", data: newer, sync: true)
            return .none
        }
        let target = try lifecycle.finish(path, manifest: record, to: .retry)
        #expect(replaced.withLock { $0 }, "the scenario reached the instant between the links and the unlink")
        #expect(target == path)
        #expect(disk.contents("/spool/retry/a.bin") == payload)
        #expect(disk.contents("/spool/outbox/a.bin") == newer, "the producer's new file is still there")
    }
}
