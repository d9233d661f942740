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
        let path = RelativePath("a.bin")

        init(_ model: SimDisk.Model) throws {
            disk = SimDiskTesting.disk(model)
            let claimer: Claimer
            (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
            let retry = try SimDiskTesting.begunAttempt(path, data: SimDiskMoveBackTests.payload, ending: .retry, on: disk,
                                                        spool, lifecycle, claimer)
            try lifecycle.finish(path, manifest: retry, to: .retry)
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
    private func moveBackLength(_ model: SimDisk.Model) throws -> Int {
        let scenario = try Scenario(model)
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
}
