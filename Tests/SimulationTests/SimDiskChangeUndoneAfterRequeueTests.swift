import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderConfig
import UploaderSpool

/// A delivered file written to through its name in sent/ before its move had finished (a producer
/// that never fsyncs): recovery puts it back in the outbox as `queued`, to be sent again. A power
/// cut may then undo the producer's write, and the version already sent is back under its record.
/// Sending it again is the at-least-once promise; its earlier attempts belong to the delivery
/// before, and count no more toward `max_attempts` (noJournal seed 10009304 of the simulator: with
/// `max_attempts = 1`, the file's record reached sent/ counting two attempts).
@Suite struct SimDiskChangeUndoneAfterRequeueTests {
    static let sent = SimDiskTesting.bytes("the version that was sent")

    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aRequeuedFileCountsNoAttemptOfTheDeliveryBefore(_ model: SimDisk.Model) throws {
        struct Outcome: Hashable {
            var sentVersionBack: Bool
            var countedAttempts: Int?
            var history: Int?
        }
        let outcomes = try SimDiskTesting.powerCutOutcomes(model, setUp: { disk in
            let (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
            let record = try SimDiskTesting.moveToSentCutAfterLinks(Self.sent, on: disk, spool, lifecycle, claimer)
            #expect(disk.writeInPlace("/spool/sent/a.bin", data: SimDiskTesting.bytes("written to after the upload")))
            #expect(try lifecycle.requeueIfChangedAfterUpload(RelativePath("a.bin"), manifest: record, in: .sent, as: RelativePath("a.bin"))
                    == .underItsName)
            try spool.syncDirectory(of: RelativePath("a.bin"), in: .outbox)
        }, outcome: { disk in
            let (_, _, claimer) = try! SimDiskTesting.spool(on: disk)
            guard case .ready(let claimed) = claimer.claim(RelativePath("a.bin"), now: SimDiskTesting.start) else {
                return Outcome(sentVersionBack: false)
            }
            return Outcome(sentVersionBack: disk.contents("/spool/outbox/a.bin") == Self.sent,
                           countedAttempts: claimed.manifest.countedAttempts, history: claimed.manifest.attempts.count)
        })
        #expect(outcomes.contains { $0.sentVersionBack && $0.history == 1 }, "no power cut undid the write under the kept record: \(outcomes)")
        #expect(!outcomes.contains { ($0.countedAttempts ?? 0) > 0 }, "\(outcomes)")
    }
}
