import Foundation
import Synchronization
import Testing
@testable import UploaderSimulation

/// Every invariant the simulator checks is shown to catch a bug: each plant, run on the seeds of
/// the CI block (`SimulationBlockTests`), breaks the invariant it targets in at least one of them.
@Suite("Each planted bug is caught by its invariant within the CI block")
struct PlantCheckTests {
    /// The plants CI checks: all but those no invariant catches yet.
    static let checked = Plant.allCases.filter { !uncaught.contains($0) }

    /// Plants no invariant catches yet, each an open finding: none.
    static let uncaught: Set<Plant> = []

    /// Invariants no checked plant breaks within the CI's budget: none.
    static let unplantable: Set<Invariant> = []

    /// Plants whose bug only a rare path reaches, checked over more seeds from the block's start
    /// than the block's own: `retry-after-ignored` needs a 429 or 503 with `Retry-After` whose
    /// file comes back, with the same bytes, before the wait asked for, with no clock jump between
    /// (its first catch is 485 seeds in, without a journal);
    /// `keep-sent-tenth` needs a retention pass over a sent/ fuller than the tenth of its limit
    /// while a record is young (49 seeds in, journalled); `quarantine-unsynced` needs a record moved
    /// aside into `.quarantine/` and a power cut before that move's fsyncs, without a journal (109
    /// seeds in; 346 on other builds); `head-offset-read-zero` needs a tus upload resumed with a
    /// HEAD in the boot that began it (one claimed after a power cut starts anew), 45 seeds in,
    /// journalled; `list-parts-read-empty` needs an S3 multipart upload resumed with its ListParts
    /// in the boot that began it, 514 seeds in, journalled.
    static let seedsBeyondTheBlock: [Plant: Int] = [.retryAfterIgnored: 1_000, .keepSentTenth: 400, .quarantineUnsynced: 400,
                                                    .headOffsetReadZero: 1_000, .listPartsReadEmpty: 1_000]

    /// Where each plant was first caught (disk model, seed of the block) when this list was written:
    /// that one schedule is run first, so the check costs one schedule a plant instead of every
    /// seed before its catch (2,109 schedules, five times the block). It proves the same thing,
    /// a seed of the block that breaks the invariant. A change to the code changes what a seed
    /// generates: a seed that no longer catches its plant is said, and the block is then scanned
    /// in order as without it.
    static let firstCatches: [Plant: (model: String, seed: UInt64)] = [
        .listingDropsLast: ("journalled", 20_261_131), .manifestDroppedInMove: ("journalled", 20_261_130),
        .moveDeletes: ("journalled", 20_261_130), .oneSlotShort: ("journalled", 20_261_130),
        .orderReversed: ("journalled", 20_261_130), .outboxNameKept: ("journalled", 20_261_130),
        .temporariesKept: ("journalled", 20_261_130), .timerMissesFirstDeadline: ("journalled", 20_261_130),
        .cancelLeavesRequest: ("journalled", 20_261_131), .manifestFsyncSkipped: ("journalled", 20_261_131),
        .oneSlotExtra: ("journalled", 20_261_137), .silentResend: ("journalled", 20_261_131),
        .hookJobsLost: ("journalled", 20_261_139), .windowIgnored: ("journalled", 20_261_132),
        .mtimeShiftsPerBoot: ("journalled", 20_261_133), .groupCommitOvercounts: ("noJournal", 20_261_138),
        .requeueRecordSkipped: ("journalled", 20_261_138), .hookRerunAfterFinish: ("journalled", 20_261_151),
        .keepSentTenth: ("journalled", 20_261_179), .stopOutlastsGrace: ("journalled", 20_261_169),
        .maxAttemptsOne: ("journalled", 20_261_140), .connectFailureAsReset: ("journalled", 20_261_130),
        .rescanForgetsFound: ("journalled", 20_261_135), .shortManifestWrite: ("journalled", 20_261_172),
        .sftpTemporaryKept: ("journalled", 20_261_250), .quarantineUnsynced: ("noJournal", 20_261_239),
        .successFor5xx: ("journalled", 20_261_175), .maxAttemptsPlusTwo: ("journalled", 20_261_162),
        .headOffsetReadZero: ("journalled", 20_261_175), .listPartsReadEmpty: ("journalled", 20_261_644),
        .retryAfterIgnored: ("noJournal", 20_261_615), .spoolLockIgnored: ("journalled", 20_261_136),
    ]

    @Test func everyInvariantButTheUnplantableHasAPlantCheckedHere() {
        let covered = Set(Self.checked.map(\.target))
        #expect(Set(Invariant.allCases).subtracting(Self.unplantable) == covered)
        #expect(covered.isDisjoint(with: Self.unplantable))
    }

    /// Runs the plant's first catch (`firstCatches`); if it no longer catches, runs the block's seeds,
    /// two at a time, on the plant's disk models in order, until one breaks the plant's invariant;
    /// stops there, so the check costs only the seeds it needs.
    @Test(arguments: checked)
    func thePlantBreaksItsInvariantWithinTheBlock(plant: Plant) {
        let threads = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let end = SimulationBlockTests.from + UInt64(Self.seedsBeyondTheBlock[plant] ?? SimulationBlockTests.seeds)
        if let known = Self.firstCatches[plant], plant.models.contains(known.model),
           (SimulationBlockTests.from..<end).contains(known.seed) {
            let report = SimulationRunner.run(count: 1, from: known.seed, model: known.model, threads: 1, plant: plant, shrink: 0)
            if let caught = report.violations.first(where: { $0.invariant == plant.invariantName }) {
                print("plant \(plant.rawValue): \(plant.invariantName) broken at seed \(caught.seed) disk=\(known.model): \(caught.detail)")
                return
            }
            print("plant \(plant.rawValue): seed \(known.seed) disk=\(known.model) no longer breaks \(plant.invariantName); "
                  + "scanning the block (update PlantCheckTests.firstCatches)")
        }
        var seen: [String] = []
        for model in plant.models {
            var next = SimulationBlockTests.from
            while next < end {
                let count = Int(min(UInt64(threads), end - next))
                let report = SimulationRunner.run(count: count, from: next, model: model, threads: threads, plant: plant, shrink: 0)
                if let caught = report.violations.filter({ $0.invariant == plant.invariantName }).min(by: { $0.seed < $1.seed }) {
                    print("plant \(plant.rawValue): \(plant.invariantName) broken at seed \(caught.seed) disk=\(model): \(caught.detail)")
                    return
                }
                seen += report.violations.map { "seed \($0.seed) \(model): \($0.invariant)" }
                next += UInt64(count)
            }
        }
        Issue.record("plant \(plant.rawValue) never broke \(plant.invariantName) in the CI block; other violations: \(seen.prefix(10))")
    }

    @Test func thePlantNamedOnTheCommandLineIsReportedUnderItsInvariant() throws {
        let plant = try Plant.parse("outbox-name-kept").get()
        let printed = Mutex<[String]>([])
        let report = SimulationRunner.run(count: 1, from: SimulationBlockTests.from, model: "journalled", threads: 1, plant: plant,
                                          shrink: 0) { text in printed.withLock { $0.append(text) } }
        #expect(report.violations.map(\.invariant) == ["noFileInTwoPlaces"])
        let first = try #require(printed.withLock { $0.first })
        #expect(first.hasPrefix("VIOLATION seed=\(SimulationBlockTests.from) disk=journalled invariant=noFileInTwoPlaces: "))
    }

    @Test func anUnknownPlantNameIsOneLineListingTheNames() {
        guard case .failure(let error) = Plant.parse("fsync-skipped") else {
            Issue.record("an unknown name parsed")
            return
        }
        #expect(error.description == "unknown plant 'fsync-skipped'; plants: " + Plant.allCases.map(\.rawValue).joined(separator: ", "))
        #expect(!error.description.contains("\n"))
    }
}
