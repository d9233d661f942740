import Foundation
import Testing
@testable import UploaderSimulation
@testable import UploaderSpool
import UploaderSupport
import UploaderCore
import UploaderConfig
import UploaderDecisions

/// The crash contract as a table over the move's plan: a delivered (or failed) file's move,
/// stopped after each prefix of its planned steps (kill -9), then a power cut on each disk model
/// (8 draws), then the real start-up (recovery's scan and the claims it asks for). Whatever the
/// prefix, the file ends in exactly one place, with its record beside it; once the plan's first
/// step (the final record made durable) is done, that place is the move's destination — the file
/// is never uploaded again — and with `after_send = delete` a delivery ends with nothing left.
@Suite struct MovePlanCrashContractTests {
    static let payload = SimDiskTesting.bytes("the payload")
    static let path = RelativePath("a.bin")

    /// A spool on a fresh disk with `a.bin` claimed and its attempt begun, all durable, and the
    /// attempt's final record written to the outbox (step 2's rename, not yet its fsync).
    struct Scenario {
        let disk: SimDisk
        let spool: Spool
        let lifecycle: FileLifecycle
        let claimer: Claimer
        let move: PendingMove

        init(_ model: SimDisk.Model, to area: Spool.Area, afterSend: AfterSend) throws {
            disk = SimDiskTesting.disk(model)
            let (spool, keeping, claimer) = try SimDiskTesting.spool(on: disk)
            self.spool = spool
            lifecycle = FileLifecycle(spool: spool, logger: keeping.logger, afterSend: afterSend)
            self.claimer = Claimer(spool: spool, profileName: "sim", digest: .sha256, mimeTypes: MimeTypes(byExtension: [:]),
                                   lifecycle: lifecycle, logger: keeping.logger)
            let ended = try SimDiskTesting.begunAttempt(MovePlanCrashContractTests.path, data: MovePlanCrashContractTests.payload,
                                                        ending: area == .sent ? .sent : .retry, on: disk, spool, lifecycle, claimer)
            move = try lifecycle.recordFinal(MovePlanCrashContractTests.path, manifest: ended, to: area, live: true)
        }

        /// Performs the move's planned steps — the batch's, then its end's — stopping after `limit`
        /// of them; returns how many it performed.
        @discardableResult
        func performSteps(upTo limit: Int) -> Int {
            var performer = DiskStepPerformer(lifecycle: lifecycle, moves: [move])
            var batch = MoveBatchPlan([move.planned])
            var done = 0
            while done < limit, let step = batch.next() {
                batch.took(performer.perform(step))
                done += 1
            }
            guard done < limit, case .moved = batch.results[0] else { return done }
            var end = MoveEndPlan(path: move.path, area: move.area, target: move.target,
                                  deletesAfter: lifecycle.deletesAfterMove(move.manifest, in: move.area), namesMayBeUnsynced: false)
            while done < limit, let step = end.next() {
                end.took(performer.perform(step))
                done += 1
            }
            return done
        }

        /// The real start-up: recovery's scan, then a claim of each file it returns.
        func startUp() {
            for file in SimDiskTesting.recovery(spool, lifecycle).scanOutbox().files {
                _ = claimer.claim(file, now: SimDiskTesting.start)
            }
        }

        var payloadPlaces: [String] {
            SimDiskTesting.files(on: disk, below: "/spool").filter { $0.value == MovePlanCrashContractTests.payload }.keys.sorted()
        }

        func record(in area: Spool.Area) -> Manifest? {
            guard case .success(let manifest) = spool.readManifest(for: MovePlanCrashContractTests.path, in: area) else { return nil }
            return manifest
        }
    }

    static let cases: [(Spool.Area, AfterSend)] = [(.sent, .keep), (.retry, .keep), (.sent, .delete)]

    @Test(arguments: SimDisk.Model.allCases)
    func everyPrefixOfAMovesPlanEndsWithTheFileOnceAndFiledAfterAPowerCut(model: SimDisk.Model) throws {
        for (area, afterSend) in Self.cases {
            let length = try Scenario(model, to: area, afterSend: afterSend).performSteps(upTo: .max)
            #expect(length >= 9, "the whole plan of a move into \(area.rawValue)/")
            for k in 0...length {
                for seed in 0..<UInt64(8) {
                    let scenario = try Scenario(model, to: area, afterSend: afterSend)
                    scenario.performSteps(upTo: k)
                    scenario.disk.killProcess()
                    var rng = SplitMix64(seed: seed)
                    scenario.disk.powerCut(&rng)
                    scenario.startUp()
                    let cut = "into \(area.rawValue)/ (after_send = \(afterSend)), stopped after step \(k) of \(length), power cut draw \(seed)"
                    let filed = afterSend == .delete ? [] : ["/spool/\(area.rawValue)/a.bin"]
                    let places = scenario.payloadPlaces
                    if k == 0 && places == ["/spool/outbox/a.bin"] {
                        // The final record's rename undone by the cut: the attempt is open again, to be sent again.
                        #expect([.queued, .uploading].contains(scenario.record(in: .outbox)?.state), "\(cut)")
                        continue
                    }
                    #expect(places == filed, "\(cut)")
                    #expect(scenario.record(in: .outbox) == nil, "\(cut): the outbox still holds a record")
                    if afterSend == .delete {
                        #expect(scenario.disk.names(in: "/spool/sent").isEmpty, "\(cut)")
                    } else {
                        #expect(scenario.record(in: area)?.state == scenario.move.manifest.state, "\(cut): the record beside the file")
                    }
                }
            }
        }
    }
}
