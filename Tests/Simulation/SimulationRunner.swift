import Foundation
import Synchronization

/// Runs many seeds, on as many threads as there are cores (each runner and its schedules' threads
/// on a processor of their own), and reports what broke.
package enum SimulationRunner {
    package struct Report: Sendable {
        package var schedules = 0
        package var violations: [(seed: UInt64, model: String, invariant: String, detail: String)] = []
        package var seconds = 0.0
        package var crashes = 0
        package var powerCuts = 0
    }

    /// The destinations `--destination` takes.
    package static let destinations = SimDestination.allCases.map(\.rawValue)

    /// The disk models, by the names the command line takes.
    package static let models = SimDisk.Model.allCases.map(\.rawValue)

    /// Runs seeds `from ..< from + count` under `model`; `plant` turns on a planted bug.
    /// `destination`: every schedule's (`http`, `s3`, `tus`, `sftp`), whatever it draws.
    package static func run(count: Int, from: UInt64, model: String, threads: Int, plant: Plant? = nil, shrink: Int = 150,
                            destination: String? = nil, onViolation: @escaping @Sendable (String) -> Void = { _ in }) -> Report {
        let options = self.options(model: model, plant: plant, destination: destination)
        let next = Mutex<UInt64>(from)
        let report = Mutex(Report())
        let started = Date()
        let group = DispatchGroup()
        for runner in 0..<max(1, threads) {
            group.enter()
            let thread = Thread {
                ProcessorAffinity.pinCallingThread(toNth: runner)
                while true {
                    let seed = next.withLock { n -> UInt64? in
                        guard n < from + UInt64(count) else { return nil }
                        defer { n += 1 }
                        return n
                    }
                    guard let seed else { break }
                    let sim = Simulation(options: options, choices: ChoiceSource(seed: seed))
                    let violation = sim.run()
                    report.withLock {
                        $0.schedules += 1
                        $0.crashes += sim.crashes
                        $0.powerCuts += sim.powerCuts
                    }
                    if let violation {
                        let text = describe(seed: seed, model: model, violation: violation, config: sim.config, options: options, choices: sim.choices.drawn,
                                            shrink: shrink)
                        report.withLock { $0.violations.append((seed, model, violation.invariant.rawValue, violation.detail)) }
                        onViolation(text)
                    }
                }
                group.leave()
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
        group.wait()
        var result = report.withLock { $0 }
        result.seconds = Date().timeIntervalSince(started)
        return result
    }

    /// Seed, invariant, the options the schedule drew, and the shortest trace shrinking found.
    static func describe(seed: UInt64, model: String, violation: Violation, config: SimConfig, options: Simulation.Options, choices: [UInt64],
                         shrink: Int) -> String {
        var shrinker = Shrinker(options: options)
        shrinker.budget = shrink
        let shrunk = shrinker.shrink(choices, violation)
        var text = "VIOLATION seed=\(seed) disk=\(model) invariant=\(violation.invariant.rawValue): \(violation.detail)\n"
        text += "  config: \(config.summary)\n"
        text += "  shortest trace found (\(shrunk.trace.count) lines, after \(shrunk.replays) replays; `--replay \(seed) --disk \(model)` reproduces the original):\n"
        text += shrunk.trace.map { "    " + $0 }.joined(separator: "\n")
        return text
    }

    /// Runs one seed with its log, and returns everything a person needs to see.
    package static func replay(seed: UInt64, model: String, plant: Plant? = nil, destination: String? = nil) -> (text: String, violated: Bool) {
        var options = self.options(model: model, plant: plant, destination: destination)
        options.keepLog = true
        let sim = Simulation(options: options, choices: ChoiceSource(seed: seed))
        let violation = sim.run()
        var text = "seed=\(seed) disk=\(model): \(violation.map { "VIOLATION \($0.invariant.rawValue): \($0.detail)" } ?? "no violation")\n"
        text += "uploader.conf (drawn; production's defaults for the rest):\n" + sim.config.text.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n"
        text += "trace (\(sim.trace.count) lines):\n" + sim.trace.map { "  " + $0 }.joined(separator: "\n") + "\n"
        text += "log (\(sim.log.count) lines):\n" + sim.log.map { "  " + $0 }.joined(separator: "\n")
        return (text, violation != nil)
    }

    static func options(model: String, plant: Plant?, destination: String? = nil) -> Simulation.Options {
        var options = Simulation.Options(model: SimDisk.Model(rawValue: model) ?? .journalled)
        options.plant = plant
        options.destination = destination.flatMap(SimDestination.init(rawValue:))
        return options
    }
}
