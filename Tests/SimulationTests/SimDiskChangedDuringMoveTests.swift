import Foundation
import Synchronization
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

/// A changed file coming back beside a new file under its name whose outbox fsync fails right
/// after its link: the free name is taken away again, so the running daemon never claims it while
/// the record still files the file in sent/ or retry/. The next claim of the name brings it back
/// beside the new file once more (from sent/) or finishes its move (into retry/, to be sent from
/// there), and after a power cut at any point it is in one place only.
@Suite struct SimDiskChangedBesideUnsyncedTests {
    /// The move of `a.bin` into `area`, found changed once out of the producer's reach, with a new
    /// file dropped under its name, and the first directory fsync after that failing.
    static func moveWithFailedBesideSync(_ area: SpoolArea, on disk: SimDisk) throws -> (FileLifecycle, Claimer) {
        let (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
        let path = RelativePath("a.bin")
        let record = try SimDiskTesting.begunAttempt(path, data: SimDiskTesting.bytes("sent bytes"), ending: area == .sent ? .sent : .retry,
                                                     on: disk, spool, lifecycle, claimer)
        let syncs = Mutex(0)
        // Written once the file has its name in `area`; the outbox's fsync after its link beside fails.
        #expect(throws: SystemError.self) {
            try lifecycle.finish(path, manifest: record, to: area, unchanged: {
                disk.writeInPlace("/spool/\(area.rawValue)/a.bin", data: changed)
                disk.createFile("/spool/outbox/a.bin", data: newFile, sync: true)
                // The producer's writes, and the move so far, are durable: what a cut keeps after
                // this is the move's own doing.
                try disk.syncAll()
                disk.injectFaults { site in
                    guard site == .directorySync else { return .none }
                    return syncs.withLock { count in
                        count += 1
                        return count == 1 ? .ioError : .none
                    }
                }
                return "written to"
            })
        }
        disk.injectFaults(nil)
        return (lifecycle, claimer)
    }

    static let changed = SimDiskTesting.bytes("sent bytes, and more written during the move")
    static let newFile = SimDiskTesting.bytes("a new file under the same name")

    /// Where the changed version is, among the regular files below /spool.
    static func placesOfChanged(_ disk: SimDisk) -> [String] {
        SimDiskTesting.files(on: disk, below: "/spool").filter { $0.value == changed }.map(\.key).sorted()
    }

    @Test(arguments: [SpoolArea.sent, .retry])
    func theFreeNameIsTakenAwayAgainAndTheNextClaimBringsItBack(_ area: SpoolArea) throws {
        let disk = SimDiskTesting.disk(.noJournal)
        _ = try Self.moveWithFailedBesideSync(area, on: disk)
        #expect(disk.contents("/spool/outbox/a.2.bin") == nil, "no free name the daemon could claim while the record files it elsewhere")
        #expect(Self.placesOfChanged(disk) == ["/spool/\(area.rawValue)/a.bin"])
        let found = FoundNames()
        let (_, _, again) = try SimDiskTesting.spool(on: disk, foundBeside: { name in found.names.withLock { $0.append(name) } })
        var outcome = again.claim(RelativePath("a.bin"), now: SimDiskTesting.start)
        if area == .retry {
            // A move into retry/ is finished for the file that has its name there; the new file
            // under the name is claimed on its own. The changed bytes are sent from retry/.
            guard case .finishedByRecovery(.retry, RelativePath("a.bin"), _, anotherFileUnderName: true) = outcome else {
                Issue.record("the move into retry/ is not finished: \(outcome)")
                return
            }
            #expect(disk.contents("/spool/retry/a.bin.manifest.json") != nil)
            outcome = again.claim(RelativePath("a.bin"), now: SimDiskTesting.start)
        }
        guard case .ready(let file) = outcome else {
            Issue.record("the new file under the name is not claimed: \(outcome)")
            return
        }
        #expect(file.manifest.size == Int64(Self.newFile.count))
        if area == .sent {
            #expect(Self.placesOfChanged(disk) == ["/spool/outbox/a.2.bin"])
            #expect(found.names.withLock { $0 } == [RelativePath("a.2.bin")], "and is queued at once")
        } else {
            #expect(Self.placesOfChanged(disk) == ["/spool/retry/a.bin"])
        }
    }

    @Test(arguments: [SimDisk.Model.noJournal, .journalled], [SpoolArea.sent, .retry])
    func aPowerCutAfterTheFailedFsyncLeavesTheChangedVersionInOnePlace(_ model: SimDisk.Model, _ area: SpoolArea) throws {
        let outcomes = try SimDiskTesting.powerCutOutcomes(model, runs: 40, setUp: { disk in
            _ = try Self.moveWithFailedBesideSync(area, on: disk)
        }, outcome: { disk in
            // The start-up: recovery, then a claim of each file it queues.
            guard let (spool, lifecycle, claimer) = try? SimDiskTesting.spool(on: disk) else { return ["no spool after the cut"] }
            for file in SimDiskTesting.recovery(spool, lifecycle).scanOutbox().files {
                _ = claimer.claim(file, now: SimDiskTesting.start)
            }
            return Self.placesOfChanged(disk)
        })
        for places in outcomes {
            #expect(places.count == 1, "the changed version is in \(places)")
        }
    }
}
