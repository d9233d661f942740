import Foundation
import Synchronization
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderSpool

/// A record moved aside into `.quarantine/` is never lost: once the move has returned, a power
/// cut leaves it in `.quarantine/` (or, the move undone, back where it came from), on a file
/// system that persists each directory's entries on their own. The source directory's fsync by
/// any later move (here, at once) must not make its absence durable before its new entries are.
@Suite struct SimDiskQuarantineTests {
    static let record = SimDiskTesting.bytes(#"{"version":1,"state":"retry"}"#)

    /// Where the record is after the cut: in `.quarantine/`, back in retry/, both, or nowhere.
    static func whereTheRecordIs(_ disk: SimDisk) -> String {
        let aside = disk.names(in: "/spool/.quarantine").contains { disk.contents("/spool/.quarantine/" + $0) == record }
        let back = disk.contents("/spool/retry/a.bin.manifest.json") == record
        return aside ? (back ? "both" : "quarantine") : (back ? "retry" : "nowhere")
    }

    /// EIO for the `n`-th call at `site`, and for no other call.
    static func fails(_ site: SimDisk.FaultSite, onCall n: Int) -> @Sendable (SimDisk.FaultSite) -> SimDisk.Fault {
        let calls = Mutex(0)
        return { at in
            guard at == site else { return .none }
            return calls.withLock { count in
                count += 1
                return count == n ? .ioError : .none
            }
        }
    }

    /// A record in retry/, moved aside while the disk makes `faults`; the error the move threw.
    static func moveAsideRefused(_ model: SimDisk.Model, _ faults: @escaping @Sendable (SimDisk.FaultSite) -> SimDisk.Fault)
        throws -> (SimDisk, Spool, SystemError?) {
        let disk = SimDiskTesting.disk(model)
        let (spool, _, _) = try SimDiskTesting.spool(on: disk)
        disk.createFile("/spool/retry/a.bin.manifest.json", data: record, sync: true)
        try disk.syncAll()
        disk.injectFaults(faults)
        let refused = #expect(throws: SystemError.self) {
            try spool.quarantineManifest(for: RelativePath("a.bin"), in: .retry, now: SimDiskTesting.start)
        }
        disk.injectFaults(nil)
        return (disk, spool, refused)
    }

    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aRecordMovedAsideSurvivesAPowerCut(_ model: SimDisk.Model) throws {
        let outcomes = try SimDiskTesting.powerCutOutcomes(model, setUp: { disk in
            let (spool, _, _) = try SimDiskTesting.spool(on: disk)
            disk.createFile("/spool/retry/a.bin.manifest.json", data: Self.record, sync: true)
            try disk.syncAll()
            try spool.quarantineManifest(for: RelativePath("a.bin"), in: .retry, now: SimDiskTesting.start)
            // Another move's fsync of retry/ makes the record's absence there durable.
            try disk.syncDirectory(of: RelativePath("x"), in: "/spool/retry")
        }, outcome: Self.whereTheRecordIs)
        #expect(!outcomes.contains("nowhere"), "outcomes of the power cut: \(outcomes.sorted())")
        #expect(outcomes.contains("quarantine"))
    }

    /// The move aside killed at any of its operations (kill -9), then retry/ fsynced by another
    /// move of the next process, then a power cut: the record is never lost. A rename aside cut
    /// before `.quarantine/`'s fsync left the new name unsynced while that later fsync made the old
    /// name's removal durable (noJournal seed 401730: the record nowhere after the cut).
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aMoveAsideKilledAnywhereThenAPowerCutLosesNoRecord(_ model: SimDisk.Model) throws {
        for k in 1...8 {
            let outcomes = try SimDiskTesting.powerCutOutcomes(model, runs: 60, setUp: { disk in
                let (spool, _, _) = try SimDiskTesting.spool(on: disk)
                disk.createFile("/spool/retry/a.bin.manifest.json", data: Self.record, sync: true)
                try disk.syncAll()
                disk.crash(atOperation: disk.operations + k)
                _ = try? spool.quarantineManifest(for: RelativePath("a.bin"), in: .retry, now: SimDiskTesting.start)
                disk.killProcess()
                try disk.syncDirectory(of: RelativePath("x"), in: "/spool/retry")
            }, outcome: Self.whereTheRecordIs)
            #expect(!outcomes.contains("nowhere"), "killed at \(k); outcomes of the power cut: \(outcomes.sorted())")
        }
    }

    /// A move aside whose fsync of `.quarantine/` fails is undone: the record stays where it was
    /// under its one name, and `.quarantine/` holds no name of it that no fsync made durable
    /// (noJournal seed 2810 of the long run: such a name, left there, was lost by a power cut
    /// after the record's own name had been removed by the move back it belonged to).
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aMoveAsideWhoseFsyncFailsIsUndone(_ model: SimDisk.Model) throws {
        // The third directory fsync is `.quarantine/`'s, after the link (retry/'s, then the spool root's, come first).
        let (disk, _, refused) = try Self.moveAsideRefused(model, Self.fails(.directorySync, onCall: 3))
        #expect(refused?.operation == "fsync" && refused?.path == "/spool/.quarantine" && refused?.leftBehind == nil, "\(String(describing: refused))")
        #expect(disk.names(in: "/spool/.quarantine").isEmpty, "the move aside is undone")
        #expect(disk.contents("/spool/retry/a.bin.manifest.json") == Self.record)
    }

    /// A move aside whose unlink of the old name fails is undone too: its new name in
    /// `.quarantine/` goes again, durably, so a second try under the same stamp (the next scan,
    /// within the same millisecond) moves the record, and no power cut leaves two copies of it
    /// (noJournal seed 50004014 of the long run: the new name, left there, made every later
    /// try fail with EEXIST, and the record of a deleted file stayed in the outbox).
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aMoveAsideWhoseUnlinkFailsIsUndoneAndTheNextTrySucceeds(_ model: SimDisk.Model) throws {
        let (disk, spool, refused) = try Self.moveAsideRefused(model, Self.fails(.unlink, onCall: 1))
        #expect(refused?.operation == "unlink" && refused?.leftBehind == nil, "\(String(describing: refused))")
        #expect(disk.names(in: "/spool/.quarantine").isEmpty, "the move aside is undone")
        #expect(disk.contents("/spool/retry/a.bin.manifest.json") == Self.record)
        let aside = try spool.quarantineManifest(for: RelativePath("a.bin"), in: .retry, now: SimDiskTesting.start)
        #expect(aside.hasPrefix("/spool/.quarantine/a.bin.manifest.json."))
        #expect(Self.whereTheRecordIs(disk) == "quarantine")
        // A power cut right after the undone move finds the record once, where it was.
        let outcomes = try SimDiskTesting.powerCutOutcomes(model, setUp: { disk in
            let (spool, _, _) = try SimDiskTesting.spool(on: disk)
            disk.createFile("/spool/retry/a.bin.manifest.json", data: Self.record, sync: true)
            try disk.syncAll()
            disk.injectFaults(Self.fails(.unlink, onCall: 1))
            _ = try? spool.quarantineManifest(for: RelativePath("a.bin"), in: .retry, now: SimDiskTesting.start)
            disk.injectFaults(nil)
        }, outcome: Self.whereTheRecordIs)
        #expect(outcomes == ["retry"], "outcomes of the power cut: \(outcomes.sorted())")
    }

    /// A record moved aside because its file left retry/ just before (a move back whose fsync of
    /// retry/ failed after the file's unlink): the file's absence is made durable before the
    /// record's name goes, so no power cut brings the file back to retry/ without its record
    /// (noJournal seed 6766 of the long run: it came back, a second name of the file the outbox
    /// went on to deliver to sent/).
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aRecordWhoseFileJustLeftIsMovedAsideOnlyOnceThatIsDurable(_ model: SimDisk.Model) throws {
        for k in 1...9 {
            let outcomes = try SimDiskTesting.powerCutOutcomes(model, runs: 60, setUp: { disk in
                let (spool, _, _) = try SimDiskTesting.spool(on: disk)
                disk.createFile("/spool/retry/a.bin", data: SimDiskTesting.bytes("data"), sync: true)
                disk.createFile("/spool/retry/a.bin.manifest.json", data: Self.record, sync: true)
                try disk.syncAll()
                try disk.unlink(RelativePath("a.bin"), in: "/spool/retry")
                disk.crash(atOperation: disk.operations + k)
                _ = try? spool.quarantineManifest(for: RelativePath("a.bin"), in: .retry, now: SimDiskTesting.start)
                disk.killProcess()
            }, outcome: { disk in
                let file = disk.contents("/spool/retry/a.bin") != nil
                return file && disk.contents("/spool/retry/a.bin.manifest.json") == nil ? "file without its record" : Self.whereTheRecordIs(disk)
            })
            #expect(!outcomes.contains("file without its record") && !outcomes.contains("nowhere"),
                    "killed at \(k); outcomes of the power cut: \(outcomes.sorted())")
        }
    }
}
