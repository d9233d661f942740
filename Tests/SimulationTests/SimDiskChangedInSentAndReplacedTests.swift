import Foundation
import Synchronization
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderConfig
import UploaderSpool

/// A move into sent/ cut after its links and the removal of the file's outbox name; then the
/// version in sent/ is written to through the name the move gave it (changed after its upload),
/// and the producer puts a new file under the outbox name. The changed version, never sent, comes
/// back beside the new file under a free name; its record goes from sent/ and from the outbox, so
/// sent/ holds no unsent bytes and the new file is claimed afresh. The simulator found, first, the
/// record taken away and the file left in sent/ without it (journalled seed 75), then the changed
/// version kept in sent/ under a `sent` record, by recovery (journalled seed 500959) and by the
/// new file's claim meeting the old record first (the same seed, once recovery was right); and,
/// with a symlink under the outbox name instead of a new file, the record moved aside while the
/// changed version stayed in sent/ under its second name (noJournal seed 18077577, `digest = none`).
@Suite struct SimDiskChangedInSentAndReplacedTests {
    static let path = RelativePath("a.bin")
    static let changed = SimDiskTesting.bytes("written to through sent/ after the upload")
    static let newer = SimDiskTesting.bytes("a new file under the same name")

    /// The move cut after its links, the version in sent/ written to, a new file under the
    /// outbox name; all durable.
    struct Layout {
        let disk: SimDisk
        let lifecycle: FileLifecycle
        let claimer: Claimer
        let record: Manifest
        /// The names the claimer said it brought back beside another entry (to be queued).
        let foundBeside = FoundNames()

        init(_ model: SimDisk.Model) throws {
            disk = SimDiskTesting.disk(model)
            let spool: Spool
            let found = foundBeside
            (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk, foundBeside: { name in found.names.withLock { $0.append(name) } })
            record = try SimDiskTesting.moveToSentCutAfterLinks(SimDiskTesting.bytes("the version that was sent"), on: disk, spool,
                                                                lifecycle, claimer)
            #expect(disk.writeInPlace("/spool/sent/a.bin", data: SimDiskChangedInSentAndReplacedTests.changed))
            #expect(disk.createFile("/spool/outbox/a.bin", data: SimDiskChangedInSentAndReplacedTests.newer, sync: true))
            try disk.syncAll()
        }

        /// The new file's claim: ready, as another version than the old record's.
        func claimTheNewFile() {
            guard case .ready(let claimed) = claimer.claim(SimDiskChangedInSentAndReplacedTests.path, now: SimDiskTesting.start) else {
                Issue.record("the new file was not claimed")
                return
            }
            #expect(claimed.manifest.id != record.id, "the new file is another version")
            #expect(disk.contents("/spool/outbox/a.bin") == SimDiskChangedInSentAndReplacedTests.newer)
        }
    }

    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func theChangedVersionComesBackBesideTheNewFile(_ model: SimDisk.Model) throws {
        let layout = try Layout(model)
        let disk = layout.disk
        #expect(try layout.lifecycle.requeueIfChangedAfterUpload(Self.path, manifest: layout.record, in: .sent, as: Self.path)
                == .beside(RelativePath("a.2.bin")))
        #expect(disk.names(in: "/spool/sent").isEmpty)
        #expect(disk.contents("/spool/outbox/a.2.bin") == Self.changed)
        #expect(!disk.exists(path: "/spool/outbox/a.bin.manifest.json") && !disk.exists(path: "/spool/outbox/a.2.bin.manifest.json"))
        layout.claimTheNewFile()
    }

    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func theNewFilesClaimBringsTheChangedVersionBackBesideIt(_ model: SimDisk.Model) throws {
        let layout = try Layout(model)
        let disk = layout.disk
        // No recovery first: the claim of the new file meets the old `sent` record beside it.
        layout.claimTheNewFile()
        #expect(disk.names(in: "/spool/sent").isEmpty, "sent/ keeps no bytes that were never sent")
        #expect(disk.contents("/spool/outbox/a.2.bin") == Self.changed, "the changed version waits beside the new file")
        #expect(!disk.exists(path: "/spool/outbox/a.2.bin.manifest.json"))
        #expect(layout.foundBeside.names.withLock { $0 } == [RelativePath("a.2.bin")], "and is queued at once, not at the next scan")
    }

    /// The producer put a symlink (or a FIFO) under the outbox name, not a file: its claim refuses
    /// it, and first brings the changed version back beside it, as for a new file; the record is
    /// not moved aside, and sent/ keeps no bytes that were never sent.
    @Test(arguments: [SimDisk.Model.noJournal, .journalled], [true, false])
    func aSymlinkOrFIFOUnderTheNameStillBringsTheChangedVersionBack(_ model: SimDisk.Model, symlink: Bool) throws {
        let layout = try Layout(model)
        let disk = layout.disk
        try disk.remove("/spool/outbox/a.bin")
        #expect(symlink ? disk.makeSymlink("/spool/outbox/a.bin", to: "/etc/passwd") : disk.makeFIFO("/spool/outbox/a.bin"))
        guard case .refused = layout.claimer.claim(Self.path, now: SimDiskTesting.start) else {
            Issue.record("the \(symlink ? "symlink" : "FIFO") was not refused")
            return
        }
        #expect(disk.names(in: "/spool/sent").isEmpty, "sent/ keeps no bytes that were never sent")
        #expect(disk.contents("/spool/outbox/a.2.bin") == Self.changed, "the changed version waits beside the new entry")
        #expect(layout.foundBeside.names.withLock { $0 } == [RelativePath("a.2.bin")], "and is queued at once")
        #expect(!disk.exists(path: "/spool/outbox/a.bin.manifest.json") && !disk.exists(path: "/spool/outbox/a.2.bin.manifest.json"))
        #expect(!disk.exists(path: "/spool/.quarantine") || disk.names(in: "/spool/.quarantine").isEmpty, "nothing is moved aside")
    }
}

/// The names a claimer reported found, in order.
final class FoundNames: Sendable {
    let names = Mutex<[RelativePath]>([])
}
