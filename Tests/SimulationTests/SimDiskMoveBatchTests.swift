import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderCore
import UploaderConfig
@testable import UploaderSpool

/// Moves finished together (`Batcher`): three files, one in a subdirectory, filed to sent/ in
/// one batch on the simulated disk — one fsync per directory and step for all of them, and a
/// crash at every operation of the batch, then kill -9 or a power cut, then the real recovery:
/// each payload ends in exactly one place, as when each file moves alone.
@Suite struct SimDiskMoveBatchTests {
    static let names = ["a.bin", "b.bin", "sub/c.bin"].map(RelativePath.init)
    static func payload(_ path: RelativePath) -> [UInt8] { SimDiskTesting.bytes("payload of \(path.display)") }

    /// A spool with the three files claimed and their attempts begun, all durable.
    struct Scenario {
        let disk: SimDisk
        let spool: Spool
        let lifecycle: FileLifecycle
        let claimer: Claimer
        let finals: [Manifest]

        init(_ model: SimDisk.Model) throws {
            disk = SimDiskTesting.disk(model)
            (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
            var finals: [Manifest] = []
            for path in SimDiskMoveBatchTests.names {
                finals.append(try SimDiskTesting.begunAttempt(path, data: SimDiskMoveBatchTests.payload(path), ending: .sent, on: disk,
                                                              spool, lifecycle, claimer))
            }
            self.finals = finals
        }

        /// What `finish` does for each, with the moves in one batch.
        func finishTogether() throws {
            let moves = try zip(SimDiskMoveBatchTests.names, finals).map { path, manifest in
                try lifecycle.recordFinal(path, manifest: manifest, to: .sent, live: true)
            }
            for (move, result) in zip(moves, lifecycle.moveTogether(moves)) {
                try lifecycle.endMove(move, fileHere: try result.get(), unchanged: { nil })
            }
        }

        func recover() {
            for file in SimDiskTesting.recovery(spool, lifecycle).scanOutbox().files {
                _ = claimer.claim(file, now: SimDiskTesting.start)
            }
        }

        /// Where each payload is.
        func places(of path: RelativePath) -> [String] {
            let payload = SimDiskMoveBatchTests.payload(path)
            return SimDiskTesting.files(on: disk, below: "/spool").filter { $0.value == payload }.keys.sorted()
        }
    }

    @Test func threeMovesInOneBatchShareOneFsyncPerDirectoryAndStep() throws {
        let scenario = try Scenario(.noJournal)
        scenario.disk.logOperations()
        try scenario.finishTogether()
        let fsyncs = scenario.disk.takeOperationLog().filter { $0.contains("disk fsync /spool/outbox") || $0.contains("disk fsync /spool/sent") }
        for path in Self.names { #expect(scenario.places(of: path) == [path.displayed(in: "/spool/sent")]) }
        #expect(scenario.disk.names(in: "/spool/outbox").sorted() == [".upl-tmp", "sub"])
        // Records (outbox and outbox/sub), new names (sent and sent/sub), old names (outbox and
        // outbox/sub): six directory fsyncs for three files — besides the one making sent/sub itself
        // durable in sent/ — where one move at a time takes three each.
        let perStep = fsyncs.filter { !$0.contains("/.upl-tmp") }
        #expect(perStep.count == 7, "\(perStep)")
    }

    @Test(arguments: [SimDisk.Model.journalled, .noJournal])
    func aCrashAnywhereInTheBatchLeavesEachPayloadInOnePlaceAfterRecovery(_ model: SimDisk.Model) throws {
        let length: Int = try {
            let scenario = try Scenario(model)
            let before = scenario.disk.operations
            try scenario.finishTogether()
            return scenario.disk.operations - before
        }()
        for k in 0...length {
            for cut in 0..<11 {
                let scenario = try Scenario(model)
                scenario.disk.crash(atOperation: scenario.disk.operations + k)
                try? scenario.finishTogether()
                if cut == 0 {
                    scenario.disk.killProcess()
                } else {
                    var rng = SplitMix64(seed: UInt64(cut))
                    scenario.disk.powerCut(&rng)
                }
                scenario.recover()
                for path in Self.names {
                    #expect(scenario.places(of: path).count == 1, "crash at \(k), cut \(cut): \(path.display) at \(scenario.places(of: path))")
                }
            }
        }
    }
}
