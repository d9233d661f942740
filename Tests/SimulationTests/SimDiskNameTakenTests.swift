import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderSpool
import UploaderValues

/// The free name a move's record gives its file in sent/ is taken before the file's link: two
/// files moved at once chose the same one (`a.bin` and `a.2.bin` in the outbox, `a.bin` in
/// sent/ already: both chose `a.2.bin`; noJournal seed 1532). The move writes its record again
/// with the next free name and files the file there; the other file keeps its own.
@Suite struct SimDiskNameTakenTests {
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aMoveWhoseNameIsTakenBeforeItsLinkTakesTheNextFreeOne(_ model: SimDisk.Model) throws {
        let scenario = try SimDiskLifecycleTests.Scenario(model)
        let other = SimDiskTesting.bytes("another file, filed first under the same name")
        let target = try scenario.lifecycle.finish(scenario.path, manifest: scenario.manifest, to: .sent, recorded: {
            // Between the record and the link: another move takes the name.
            scenario.disk.createFile("/spool/sent/a.bin", data: other, sync: true)
        })
        #expect(target == RelativePath("a.2.bin"))
        #expect(scenario.disk.contents("/spool/sent/a.bin") == other)
        #expect(scenario.payloadPlaces == ["/spool/sent/a.2.bin"])
        let record = try Manifest.decode(Data(try #require(scenario.disk.contents("/spool/sent/a.2.bin.manifest.json"))))
        #expect(record.storedAs == "sent/a.2.bin")
        #expect(!scenario.disk.exists(path: "/spool/outbox/a.bin.manifest.json"))
    }
}
