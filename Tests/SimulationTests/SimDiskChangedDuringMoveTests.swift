import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
@testable import UploaderSpool

/// A file written to during its move into sent/ or retry/ goes back to the outbox to be sent
/// again; when its producer has meanwhile dropped a new file under the same name, the changed one
/// comes back beside it under a free name, as a file of its own. The simulator saw that move back
/// refused and the changed version left in retry/ without its manifest (noJournal seed 20261559,
/// `filesAndManifestsPaired`).
@Suite struct SimDiskChangedDuringMoveTests {
    @Test(arguments: [SpoolArea.sent, .retry])
    func aChangedFileWhoseNameWasTakenComesBackBesideTheNewOne(_ area: SpoolArea) throws {
        let disk = SimDiskTesting.disk(.noJournal)
        let (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
        let path = RelativePath("a.bin")
        let record = try SimDiskTesting.begunAttempt(path, data: SimDiskTesting.bytes("sent bytes"), ending: area == .sent ? .sent : .retry,
                                                     on: disk, spool, lifecycle, claimer)
        let changed = SimDiskTesting.bytes("sent bytes, and more written during the move")
        let newFile = SimDiskTesting.bytes("a new file under the same name")
        #expect(throws: FileLifecycle.ChangedDuringMove(change: "written to", broughtBackAs: RelativePath("a.2.bin"))) {
            try lifecycle.finish(path, manifest: record, to: area, unchanged: {
                // Out of the producer's reach now: it wrote to the file before, and drops a new one under the name.
                disk.writeInPlace("/spool/\(area.rawValue)/a.bin", data: changed)
                disk.createFile("/spool/outbox/a.bin", data: newFile, sync: true)
                return "written to"
            })
        }
        let files = SimDiskTesting.files(on: disk, below: "/spool")
        #expect(files["/spool/outbox/a.bin"] == newFile)
        #expect(files["/spool/outbox/a.2.bin"] == changed)
        #expect(files["/spool/outbox/a.2.bin.manifest.json"] == nil, "the changed file is claimed afresh")
        #expect(disk.names(in: "/spool/\(area.rawValue)").isEmpty)
    }
}
