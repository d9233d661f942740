import Foundation
import Synchronization
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderSpool
import UploaderValues

/// The disk's faults (DESIGN §13) laid out by hand: after a failed fsync the data is lost for
/// good even when a later fsync succeeds; a short write is completed by the next; a full disk
/// refuses the record of an attempt, which then is none, and leaves no temporary behind.
@Suite struct SimDiskFaultTests {
    private func bytes(_ text: String) -> [UInt8] { SimDiskTesting.bytes(text) }

    /// Faults from a list, one per call, then none.
    private func script(_ disk: SimDisk, _ faults: [SimDisk.Fault]) {
        let left = Mutex(faults)
        disk.injectFaults { _ in left.withLock { $0.isEmpty ? .none : $0.removeFirst() } }
    }

    @Test(arguments: SimDisk.Model.allCases)
    func afterAFailedFsyncALaterFsyncSucceedsAndAPowerCutStillKeepsTheOldContent(_ model: SimDisk.Model) throws {
        let outcomes = try SimDiskTesting.powerCutOutcomes(model, setUp: { disk in
            try SimDiskTesting.durable(disk, directories: ["/d"], files: ["/d/f": "old"])
            disk.writeInPlace("/d/f", data: bytes("new"))
            let inode = try #require(disk.inode("/d/f"))
            script(disk, [.ioError])
            #expect(throws: SystemError.self) { try disk.fsync(inode, "/d/f") }
            try disk.fsync(inode, "/d/f")   // the trap: this one reports success
            try disk.syncAll()
            #expect(disk.contents("/d/f") == bytes("new"))  // the kernel still shows the new bytes
        }, outcome: { $0.contents("/d/f") })
        #expect(outcomes == [bytes("old")])
    }

    @Test func aShortWriteIsFollowedByTheRestAndTheFileIsWhole() throws {
        let disk = SimDiskTesting.disk(.noJournal)
        try SimDiskTesting.durable(disk, directories: ["/d"])
        script(disk, [.none, .shortWrite, .shortWrite])
        let before = disk.operations
        try disk.createFile(bytes("0123456789"), named: RelativePath("f"), in: "/d", sync: true)
        #expect(disk.contents("/d/f") == bytes("0123456789"))
        #expect(disk.operations - before == 5)  // create, three writes (5, 2, 3 bytes), fsync
    }

    @Test(arguments: [[SimDisk.Fault.noSpace], [.none, .noSpace], [.none, .shortWrite, .noSpace], [.none, .none, .ioError]])
    func anAttemptRecordTheDiskRefusesIsNoAttemptAndLeavesNoTemporary(_ faults: [SimDisk.Fault]) throws {
        let disk = SimDiskTesting.disk(.journalled)
        let (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
        disk.createFile("/spool/outbox/a.bin", data: bytes("payload"), sync: true)
        try disk.syncAll()
        guard case .ready(let file) = claimer.claim(RelativePath("a.bin"), now: SimDiskTesting.start) else {
            Issue.record("not claimed")
            return
        }
        script(disk, faults)
        #expect(throws: SystemError.self) { try lifecycle.beginAttempt(file, now: SimDiskTesting.start) }
        #expect(disk.contents("/spool/outbox/a.bin") == bytes("payload"))
        let record = disk.contents("/spool/outbox/a.bin.manifest.json").flatMap { try? Manifest.decode(Data($0)) }
        #expect(record?.state != .uploading)
        #expect(record?.attempts.isEmpty ?? true)
        #expect(disk.names(in: spool.paths.outboxTemporary).isEmpty)
        #expect(disk.names(in: "/spool/outbox").filter { $0.hasPrefix(".upl-tmp-") }.isEmpty)
    }
}

/// A manifest write the disk refuses, whose half-made temporary it refuses to remove as well:
/// the error says so, and the next manifest write that goes through removes it, with no rescan
/// or restart (found by the long simulator run: a daemon with no `rescan` kept it for good).
@Suite struct SimDiskUnremovedTemporaryTests {
    @Test(arguments: SimDisk.Model.allCases)
    func theNextWriteThatGoesThroughRemovesIt(_ model: SimDisk.Model) throws {
        let disk = SimDiskTesting.disk(model)
        let (spool, _, _) = try SimDiskTesting.spool(on: disk)
        let name = RelativePath("a.bin")
        let manifest = Manifest(id: "id-a", profile: "p", path: name, size: 1, mtime: "t0", sha256: nil,
                                contentType: "application/octet-stream", state: .queued, createdAt: "t0")
        let faults = Mutex<[SimDisk.FaultSite: SimDisk.Fault]>([.write: .noSpace, .unlink: .ioError])
        disk.injectFaults { site in faults.withLock { $0.removeValue(forKey: site) ?? .none } }
        let refused = #expect(throws: SystemError.self) { try spool.writeManifest(manifest, for: name, in: .outbox) }
        #expect(refused?.code == .noSpace && refused?.leftBehind != nil)
        #expect(refused.map { "\($0)".contains("could not be removed") } == true, "\(String(describing: refused))")
        #expect(disk.names(in: spool.paths.outboxTemporary).count == 1, "the half-made temporary is still there")

        disk.injectFaults(nil)
        try spool.writeManifest(manifest, for: name, in: .outbox)
        #expect(disk.names(in: spool.paths.outboxTemporary).isEmpty)
        #expect(!spool.temporaries.hasUnremoved)
    }
}
