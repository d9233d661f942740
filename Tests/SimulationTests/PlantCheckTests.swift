import Foundation
import Synchronization
import Testing
@testable import UploaderSimulation

/// Every invariant the simulator checks is shown to catch a bug: each plant, run on the seeds of
/// the CI block (`SimulationBlockTests`), breaks the invariant it targets in at least one of them.
@Suite("Each planted bug is caught by its invariant within the CI block")
struct PlantCheckTests {
    /// The plants CI checks: all of them.
    static let checked = Plant.allCases

    /// Invariants no plant can break: none.
    static let unplantable: Set<Invariant> = []

    /// Plants whose bug only a rare path reaches, checked over more seeds from the block's start
    /// than the block's own: `list-parts-read-empty` needs a resumed S3 multipart upload, which
    /// the block's 200 seeds per model do not draw (its first catch is 197 seeds in, journalled);
    /// `retry-after-ignored` needs a 429 or 503 with `Retry-After` whose file comes back, with
    /// the same bytes, before the wait asked for, with no clock jump between (its
    /// first catch is 350 seeds in, without a journal); `head-offset-read-zero` needs a tus upload
    /// resumed with a HEAD in the boot that began it (one claimed after a power cut starts anew),
    /// its first catch 308 seeds in, without a journal.
    static let seedsBeyondTheBlock: [Plant: Int] = [.listPartsReadEmpty: 400, .retryAfterIgnored: 400, .headOffsetReadZero: 400]

    @Test func everyInvariantButTheUnplantableHasAPlantCheckedHere() {
        let covered = Set(Self.checked.map(\.target))
        #expect(Set(Invariant.allCases).subtracting(Self.unplantable) == covered)
        #expect(covered.isDisjoint(with: Self.unplantable))
    }

    /// Runs the block's seeds, two at a time, on the plant's disk models in order, until one breaks the
    /// plant's invariant; stops there, so the check costs only the seeds it needs.
    @Test(arguments: checked)
    func thePlantBreaksItsInvariantWithinTheBlock(plant: Plant) {
        let threads = max(1, ProcessInfo.processInfo.activeProcessorCount)
        var seen: [String] = []
        for model in plant.models {
            var next = SimulationBlockTests.from
            let end = SimulationBlockTests.from + UInt64(Self.seedsBeyondTheBlock[plant] ?? SimulationBlockTests.seeds)
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
