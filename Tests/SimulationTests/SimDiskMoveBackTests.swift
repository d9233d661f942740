import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderCore
import UploaderConfig
import UploaderSpool

/// A move back from retry/ (a retry came due) killed at any operation, finished by the next
/// start-up's recovery, and that cut by a power cut at any operation: after the start-up that
/// follows, the file is in exactly one place. Simulator seed 95369 (no journal): the move was
/// killed right after the file's unlink in retry/, before that directory's fsync; recovery then
/// removed the record from retry/ without making the file's absence durable first, a power cut
/// brought the file back there alone, and the outbox's copy went on to sent/.
@Suite struct SimDiskMoveBackTests {
    static let payload = SimDiskTesting.bytes("the payload")

    /// One spool with `a.bin` filed in retry/ (its record says `retry`), all of it durable.
    struct Scenario {
        let disk: SimDisk
        let spool: Spool
        let lifecycle: FileLifecycle
        let claimer: Claimer
        let path = RelativePath("a.bin")

        /// `nameTaken`: another file has since been dropped under `a.bin`, so the move back goes to `a.2.bin`.
        init(_ model: SimDisk.Model, nameTaken: Bool = false) throws {
            disk = SimDiskTesting.disk(model)
            (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
            let retry = try SimDiskTesting.begunAttempt(path, data: SimDiskMoveBackTests.payload, ending: .retry, on: disk,
                                                        spool, lifecycle, claimer)
            try lifecycle.finish(path, manifest: retry, to: .retry)
            if nameTaken { disk.createFile("/spool/outbox/a.bin", data: SimDiskTesting.bytes("another file"), sync: true) }
            try disk.syncAll()
        }

        func moveBack() throws {
            _ = try lifecycle.moveBack(fromRetry: path, resetBackoff: false)
        }

        /// The real start-up: retry/'s scan (it finishes a cut move back), then the outbox's.
        func recover() {
            let recovery = SimDiskTesting.recovery(spool, lifecycle)
            _ = recovery.scanRetry()
            _ = recovery.scanOutbox()
        }

        /// Where the payload is: paths of regular files holding it.
        var payloadPlaces: [String] {
            SimDiskTesting.files(on: disk, below: "/spool").filter { $0.value == SimDiskMoveBackTests.payload }.keys.sorted()
        }
    }

    /// Operations of a move back when nothing crashes.
    private func moveBackLength(_ model: SimDisk.Model, nameTaken: Bool = false) throws -> Int {
        let scenario = try Scenario(model, nameTaken: nameTaken)
        let before = scenario.disk.operations
        try scenario.moveBack()
        return scenario.disk.operations - before
    }

    @Test func aMoveBackPutsTheFileAndItsRecordInTheOutboxOnly() throws {
        let scenario = try Scenario(.noJournal)
        try scenario.moveBack()
        #expect(scenario.payloadPlaces == ["/spool/outbox/a.bin"])
        #expect(scenario.disk.names(in: "/spool/retry").isEmpty)
    }

    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aMoveBackKilledAnywhereThenItsRecoveryCutByAPowerCutAnywhereLeavesTheFileInOnePlace(_ model: SimDisk.Model) throws {
        try SimDiskTesting.killedThenRecoveryCut(operations: try moveBackLength(model), make: { try Scenario(model) },
                                                 disk: \.disk, run: { try $0.moveBack() }, recover: { $0.recover() }) { scenario, cut in
            #expect(scenario.payloadPlaces.count == 1, "move back \(cut): \(scenario.payloadPlaces)")
        }
    }

    /// The file's name taken by another file meanwhile: the move back goes to `a.2.bin`, and one
    /// killed after its record or its file got there is finished there, not under `a.3.bin` as
    /// well (or, cut before its `queued` record, the file waits in retry/) (the simulator found the file sent twice from two outbox names, one inode).
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aMoveBackToANumberedNameKilledAnywhereLeavesTheFileUnderThatOneName(_ model: SimDisk.Model) throws {
        try SimDiskTesting.killedThenRecoveryCut(operations: try moveBackLength(model, nameTaken: true),
                                                 make: { try Scenario(model, nameTaken: true) },
                                                 disk: \.disk, run: { try $0.moveBack() }, recover: { $0.recover() }) { scenario, cut in
            #expect([["/spool/outbox/a.2.bin"], ["/spool/retry/a.bin"]].contains(scenario.payloadPlaces), "move back \(cut): \(scenario.payloadPlaces)")
        }
    }

    /// The first cut of a move back (killed at its k-th disk operation) that leaves its `queued`
    /// record in the outbox without the file; nil when none does.
    private func cutWithTheRecordAlone(_ model: SimDisk.Model) throws -> (scenario: Scenario, k: Int)? {
        for k in 1..<(try moveBackLength(model)) {
            let scenario = try Scenario(model)
            let disk = scenario.disk
            disk.crash(atOperation: disk.operations + k)
            try? scenario.moveBack()
            disk.killProcess()
            if disk.exists(path: "/spool/outbox/a.bin.manifest.json"), !disk.exists(path: "/spool/outbox/a.bin") { return (scenario, k) }
        }
        return nil
    }

    /// A move back killed after its `queued` record reached the outbox, and another file dropped
    /// under the name before the start-up: the move is finished under `a.2.bin`, not retried
    /// against the taken name for ever (the simulator saw the file stay in retry/ as `queued`).
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aMoveBackWhoseNameAProducerTookMeanwhileFinishesUnderAFreeName(_ model: SimDisk.Model) throws {
        let (scenario, k) = try #require(try cutWithTheRecordAlone(model), "no cut left the record in the outbox without the file")
        scenario.disk.createFile("/spool/outbox/a.bin", data: SimDiskTesting.bytes("another file"), sync: true)
        scenario.recover()
        #expect(scenario.payloadPlaces == ["/spool/outbox/a.2.bin"], "killed at \(k)")
        #expect(scenario.disk.names(in: "/spool/retry").isEmpty, "killed at \(k)")
        #expect(!scenario.disk.exists(path: "/spool/outbox/a.bin.manifest.json"), "killed at \(k): the record is not left beside the other file")
    }

    /// The same finished by the live move back (the retry came due again) rather than the start-up:
    /// the record's first outbox name goes, or the other file's claim would take it for its own —
    /// key and resumable upload included — while this file resumes that upload under `a.2.bin`
    /// (journalled seed 306177, `neverTwoUploadsAtOnce`: two tus requests at once under one key).
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aLiveMoveBackWhoseNameAProducerTookLeavesNoRecordBesideTheOtherFile(_ model: SimDisk.Model) throws {
        let (scenario, k) = try #require(try cutWithTheRecordAlone(model), "no cut left the record in the outbox without the file")
        scenario.disk.createFile("/spool/outbox/a.bin", data: SimDiskTesting.bytes("another file"), sync: true)
        #expect(try scenario.lifecycle.moveBack(fromRetry: scenario.path, resetBackoff: false) == RelativePath("a.2.bin"))
        #expect(scenario.payloadPlaces == ["/spool/outbox/a.2.bin"], "killed at \(k)")
        #expect(scenario.disk.exists(path: "/spool/outbox/a.2.bin.manifest.json"))
        #expect(!scenario.disk.exists(path: "/spool/outbox/a.bin.manifest.json"), "killed at \(k)")
        #expect(scenario.disk.names(in: "/spool/retry").isEmpty, "killed at \(k)")
    }

    /// A running daemon's rescan (no retry/ scan, as after an inotify overflow) that meets a move
    /// back whose `queued` record reached the outbox, the file not yet: it brings the file back,
    /// and the record's name in retry/ goes too, so the file is not left with a second record
    /// there once it is sent (journalled seed 20261421, `filesAndManifestsPaired`).
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aRescanThatFinishesAMoveBackLeavesNothingInRetry(_ model: SimDisk.Model) throws {
        let (scenario, k) = try #require(try cutWithTheRecordAlone(model), "no cut left the record in the outbox without the file")
        let scan = SimDiskTesting.recovery(scenario.spool, scenario.lifecycle).scanOutbox(atStartUp: false)
        #expect(scan.files == [scenario.path], "killed at \(k)")
        #expect(scenario.payloadPlaces == ["/spool/outbox/a.bin"], "killed at \(k)")
        #expect(scenario.disk.names(in: "/spool/retry").isEmpty, "killed at \(k): \(scenario.disk.names(in: "/spool/retry"))")
    }

    /// A move back cut after its record in retry/ says `queued`, and a full disk at the start-up:
    /// the start-up cannot finish it, so it reports the file due now, and the daemon's own move
    /// back tries again (noJournal seed 59: the file waited in retry/, `queued`, until the next start).
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aMoveBackTheStartUpCannotFinishIsDueNow(_ model: SimDisk.Model) throws {
        let scenario = try Scenario(model)
        guard case .success(var record) = scenario.spool.readManifest(for: scenario.path, in: .retry) else {
            Issue.record("no record in retry/")
            return
        }
        record.state = .queued
        try scenario.spool.writeManifest(record, for: scenario.path, in: .retry)
        let recovery = SimDiskTesting.recovery(scenario.spool, scenario.lifecycle)

        scenario.disk.injectFaults { site in site == .allocate ? .noSpace : .none }
        let full = recovery.scanRetry()
        #expect(full.due.map(\.path) == [scenario.path], "due now, for the daemon's move back")
        #expect(full.requeued.isEmpty)
        #expect(scenario.payloadPlaces == ["/spool/retry/a.bin"], "nothing lost meanwhile")

        scenario.disk.injectFaults(nil)
        _ = try scenario.lifecycle.moveBack(fromRetry: scenario.path, resetBackoff: false)
        #expect(scenario.payloadPlaces == ["/spool/outbox/a.bin"])
        #expect(SimDiskTesting.files(on: scenario.disk, below: "/spool/retry").isEmpty)
    }
}
