import Foundation
import Testing
@testable import UploaderSimulation
@testable import UploaderSpool
import UploaderSupport
import UploaderCore
import UploaderConfig
import UploaderDecisions

/// The crash contract of a move back from retry/ (steps 6–8) as a table over its plan: the move
/// killed after each prefix of its steps, a power cut on each disk model (8 draws), then the real
/// start-up (the retry/ scan, which finishes a move back it finds begun, and the outbox scan).
/// Whatever the prefix, the file is in exactly one place with its record beside it: still in
/// retry/ as it was, or back in the outbox as `queued`.
@Suite struct MoveBackCrashContractTests {
    static let payload = SimDiskTesting.bytes("the payload")
    static let path = RelativePath("a.bin")

    /// A planner's steps performed until the process is killed: every step after `left` is refused.
    struct StepsUntilKilled: DiskSteps {
        var performer: DiskStepPerformer
        var left: Int
        var performed = 0

        mutating func perform(_ step: DiskStep) -> StepOutcome {
            guard left > 0 else { return .refused(.other) }
            left -= 1
            performed += 1
            return performer.perform(step)
        }

        mutating func underRetryMoveLock<T>(exclusive: Bool, _ body: (inout Self) throws(PlanStop) -> T) throws(PlanStop) -> T {
            try body(&self)
        }
    }

    /// `a.bin` filed in retry/ after a retryable answer, all durable.
    static func filedInRetry(_ model: SimDisk.Model) throws -> (SimDisk, Spool, FileLifecycle, Claimer) {
        let disk = SimDiskTesting.disk(model)
        let (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
        let ended = try SimDiskTesting.begunAttempt(path, data: payload, ending: .retry, on: disk, spool, lifecycle, claimer)
        try lifecycle.finish(path, manifest: ended, to: .retry)
        try disk.syncAll()
        return (disk, spool, lifecycle, claimer)
    }

    /// The move back with `limit` steps performed; returns how many were.
    @discardableResult
    static func moveBack(_ lifecycle: FileLifecycle, _ spool: Spool, upTo limit: Int) -> Int {
        var steps = StepsUntilKilled(performer: DiskStepPerformer(lifecycle: lifecycle, moves: []), left: limit)
        _ = try? SpoolMoves.moveBack(fromRetry: path, resetBackoff: false, naming: spool.storedAsNaming, on: &steps)
        return steps.performed
    }

    @Test(arguments: SimDisk.Model.allCases)
    func everyPrefixOfAMoveBackEndsWithTheFileOnceBesideItsRecord(model: SimDisk.Model) throws {
        let (_, wholeSpool, whole, _) = try Self.filedInRetry(model)
        let length = Self.moveBack(whole, wholeSpool, upTo: .max)
        #expect(length >= 12, "the whole plan of a move back")
        for k in 0...length {
            for seed in 0..<UInt64(8) {
                let (disk, spool, lifecycle, claimer) = try Self.filedInRetry(model)
                Self.moveBack(lifecycle, spool, upTo: k)
                disk.killProcess()
                var rng = SplitMix64(seed: seed)
                disk.powerCut(&rng)
                let recovery = SimDiskTesting.recovery(spool, lifecycle)
                _ = recovery.scanRetry()
                for file in recovery.scanOutbox().files { _ = claimer.claim(file, now: SimDiskTesting.start) }
                let cut = "stopped after step \(k) of \(length), power cut draw \(seed)"
                let places = SimDiskTesting.files(on: disk, below: "/spool").filter { $0.value == Self.payload }.keys.sorted()
                #expect(places.count == 1, "\(cut): \(places)")
                guard let place = places.first else { continue }
                let area: Spool.Area = place.hasPrefix("/spool/retry/") ? .retry : .outbox
                guard case .success(let record) = spool.readManifest(for: Self.path, in: area) else {
                    Issue.record("\(cut): no record beside \(place)")
                    continue
                }
                #expect(record.state == (area == .retry ? .retry : .queued), "\(cut): \(place) with a \(record.state) record")
                let other: Spool.Area = area == .retry ? .outbox : .retry
                #expect(!disk.names(in: spool.directory(other)).contains("a.bin.manifest.json"), "\(cut): a record left in \(other.rawValue)/")
            }
        }
    }
}
