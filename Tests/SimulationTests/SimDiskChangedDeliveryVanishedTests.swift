import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderCore
import UploaderConfig
import UploaderSpool

/// A move into sent/ cut after its links (the outbox names kept), the file then written to
/// through its outbox name: its claim brings it back from sent/ (both names there go). Killed
/// anywhere in that claim, the producer then removing the file, the next claim finds it vanished
/// and drops the record; a power cut after that never leaves in sent/ a manifest without its file,
/// nor the changed bytes (noJournal seed 60015959 of the simulator: the unlinks in sent/ were never
/// made durable, the record that said they were due went, and the power cut kept the removal of
/// the file's name and not the manifest's).
@Suite struct SimDiskChangedDeliveryVanishedTests {
    static let path = RelativePath("a.bin")
    static let changed = SimDiskTesting.bytes("written to through the outbox after the upload")

    struct Layout {
        let disk: SimDisk
        let claimer: Claimer

        init(_ model: SimDisk.Model) throws {
            disk = SimDiskTesting.disk(model)
            let (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
            self.claimer = claimer
            var record = try SimDiskTesting.begunAttempt(SimDiskChangedDeliveryVanishedTests.path,
                                                         data: SimDiskTesting.bytes("the version that was sent"),
                                                         ending: .sent, on: disk, spool, lifecycle, claimer)
            record.storedAs = spool.storedAs(SimDiskChangedDeliveryVanishedTests.path, in: .sent)
            try spool.writeManifest(record, for: SimDiskChangedDeliveryVanishedTests.path, in: .outbox, syncDirectory: true)
            try disk.link("/spool/outbox/a.bin", "/spool/sent/a.bin")
            try disk.link("/spool/outbox/a.bin.manifest.json", "/spool/sent/a.bin.manifest.json")
            #expect(disk.writeInPlace("/spool/outbox/a.bin", data: SimDiskChangedDeliveryVanishedTests.changed))
            try disk.syncAll()
        }
    }

    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aBringBackKilledAnywhereThenTheFileRemovedLeavesSentClean(_ model: SimDisk.Model) throws {
        let whole = try Layout(model)
        let before = whole.disk.operations
        _ = whole.claimer.claim(Self.path, now: SimDiskTesting.start)
        let length = whole.disk.operations - before
        var killedWithSentEmptied = 0
        for k in 0..<length {
            for seed in 0..<UInt64(16) {
                let layout = try Layout(model)
                let disk = layout.disk
                disk.crash(atOperation: disk.operations + k)
                _ = layout.claimer.claim(Self.path, now: SimDiskTesting.start)
                disk.killProcess()
                if seed == 0 && disk.names(in: "/spool/sent").isEmpty { killedWithSentEmptied += 1 }
                if disk.exists(path: "/spool/outbox/a.bin") { try disk.remove("/spool/outbox/a.bin") }
                _ = layout.claimer.claim(Self.path, now: SimDiskTesting.start)
                var rng = SplitMix64(seed: seed)
                disk.powerCut(&rng)
                let sent = Set(disk.names(in: "/spool/sent"))
                let cut = "killed at operation \(k) of \(length), power cut seed \(seed)"
                #expect(!sent.contains("a.bin.manifest.json") || sent.contains("a.bin"), "\(cut): a manifest alone in sent/")
                #expect(disk.contents("/spool/sent/a.bin") != Self.changed, "\(cut): sent/ holds bytes never sent")
            }
        }
        #expect(killedWithSentEmptied > 0, "no kill fell after the bring-back's unlinks in sent/")
    }
}
