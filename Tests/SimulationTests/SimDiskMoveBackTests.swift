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
            disk.createFile(path.displayed(in: spool.paths.outbox), data: SimDiskMoveBackTests.payload, sync: true)
            try disk.syncAll()
            guard case .ready(let file) = claimer.claim(path, now: SimDiskTesting.start) else {
                throw SystemError("claim", path: path.display, code: EINVAL)
            }
            try lifecycle.beginAttempt(file, now: SimDiskTesting.start)
            var retry = file.manifest
            retry.state = .retry
            retry.closeOpenAttempt(at: SimDiskTesting.start, interrupted: false)
            try lifecycle.finish(path, manifest: retry, to: .retry)
            try disk.syncAll()
        }

        func moveBack() throws {
            _ = try lifecycle.moveBack(fromRetry: path, resetBackoff: false)
        }

        /// The real start-up: retry/'s scan (it finishes a cut move back), then the outbox's.
        func recover() {
            let recovery = Recovery(spool: spool, lifecycle: lifecycle, ignore: IgnoreRules(patterns: []), recursive: true,
                                    logger: Logger(level: .error, sink: { _ in }), clock: FixedClock())
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
        let length = try moveBackLength(model)
        var recoveries = 0
        for k in 0..<length {
            for j in 0..<12 {
                for seed in 0..<UInt64(8) {
                    let scenario = try Scenario(model)
                    scenario.disk.crash(atOperation: scenario.disk.operations + k)
                    try? scenario.moveBack()
                    scenario.disk.killProcess()
                    scenario.disk.crash(atOperation: scenario.disk.operations + j)
                    scenario.recover()
                    var rng = SplitMix64(seed: seed)
                    scenario.disk.powerCut(&rng)
                    scenario.recover()
                    recoveries += 1
                    #expect(scenario.payloadPlaces.count == 1,
                            "move back killed at operation \(k), recovery cut at \(j), power cut seed \(seed): \(scenario.payloadPlaces)")
                }
            }
        }
        #expect(recoveries > 0)
    }
}
