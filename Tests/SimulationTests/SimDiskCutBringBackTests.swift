import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderSpool

/// A file written to during its move into sent/ is brought back to the outbox beside a new file
/// its producer dropped under the name (`a.2.bin`); a crash cut that after the link back, so the
/// file is in sent/ and in the outbox under one inode. The start-up's claim of the new file brings
/// the changed file back again: under the name it already has, never under a third (noJournal
/// seeds 8000686 and 6009751: `a.3.bin` too, both then sent, one file under two names in sent/).
@Suite struct SimDiskCutBringBackTests {
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aBringBackCutAfterItsLinkIsFinishedUnderTheNameItAlreadyGave(_ model: SimDisk.Model) throws {
        let scenario = try SimDiskLifecycleTests.Scenario(model)
        let disk = scenario.disk
        _ = try scenario.recordMove(to: .sent, linked: true)
        try disk.remove("/spool/outbox/a.bin")
        let changed = SimDiskTesting.bytes("written to during its move")
        #expect(disk.writeInPlace("/spool/sent/a.bin", data: changed))
        let newer = SimDiskTesting.bytes("the producer's new file under the same name")
        disk.createFile("/spool/outbox/a.bin", data: newer, sync: true)
        try disk.link("/spool/sent/a.bin", "/spool/outbox/a.2.bin")  // the bring-back, cut after its link

        _ = scenario.claimer.claim(scenario.path, now: SimDiskTesting.start)
        let outbox = disk.names(in: "/spool/outbox").filter { !$0.hasPrefix(".") }.sorted()
        #expect(!outbox.contains("a.3.bin"), "the changed file came back under a second outbox name: \(outbox)")
        #expect(disk.contents("/spool/outbox/a.2.bin") == changed)
        #expect(disk.contents("/spool/outbox/a.bin") == newer)
        #expect(!disk.exists(path: "/spool/sent/a.bin") && !disk.exists(path: "/spool/sent/a.bin.manifest.json"))
    }

    /// A name that cannot be looked at (the disk refuses every call) ends the search with that
    /// error: it is never passed over for the next, which would loop for ever.
    @Test func aNameThatCannotBeLookedAtIsAnError() throws {
        let scenario = try SimDiskLifecycleTests.Scenario(.journalled)
        _ = try scenario.recordMove(to: .sent, linked: true)
        scenario.disk.crash(atOperation: scenario.disk.operations)
        _ = try? scenario.disk.link("/spool/outbox/a.bin", "/spool/retry/a.bin")  // the crash point: the disk is dead from here
        #expect(throws: (any Error).self) { try scenario.lifecycle.freeName(for: scenario.path, in: .outbox) }
    }
}
