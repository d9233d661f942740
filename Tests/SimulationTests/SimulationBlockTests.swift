import Foundation
import Testing
import UploaderSimulation

/// The block of seeds CI runs on every change, under both disk models: generated schedules with
/// faults, crashes and power cuts, each checked against every invariant.
@Suite("The simulator finds no violation in the CI block")
struct SimulationBlockTests {
    static let seeds = Int(ProcessInfo.processInfo.environment["SIMULATION_SEEDS"] ?? "") ?? 1000
    static let from: UInt64 = 20_261_130

    @Test(arguments: SimulationRunner.models)
    func aBlockOfSeedsRunsWithoutViolations(model: String) {
        let report = SimulationRunner.run(count: Self.seeds, from: Self.from, model: model,
                                          threads: ProcessInfo.processInfo.activeProcessorCount) { text in print(text) }
        let rate = report.seconds > 0 ? Double(report.schedules) / report.seconds : 0
        print("simulation disk=\(model): \(report.schedules) schedules, \(report.crashes) kill -9, \(report.powerCuts) power cuts, "
              + "\(report.violations.count) violations, \(Int(rate)) schedules/s")
        #expect(report.schedules == Self.seeds)
        #expect(report.violations.isEmpty, "\(report.violations.map { "seed \($0.seed): \($0.invariant) — \($0.detail)" })")
    }
}
