import Foundation

/// Makes a failing schedule small: replays edited choice lists (spans removed, values zeroed,
/// where a zero is always the plainest option) and keeps each edit after which the same
/// invariant still breaks. What is left is the shortest trace it could find.
struct Shrinker {
    let options: Simulation.Options
    /// At most this many replays.
    var budget = 150

    struct Result {
        var choices: [UInt64]
        var violation: Violation
        var trace: [String]
        var replays: Int
    }

    func shrink(_ choices: [UInt64], _ violation: Violation) -> Result {
        var best = choices
        var bestViolation = violation
        var replays = 0
        func stillFails(_ candidate: [UInt64]) -> Violation? {
            replays += 1
            let sim = Simulation(options: options, choices: ChoiceSource(script: candidate))
            guard let found = sim.run(), found.invariant == violation.invariant else { return nil }
            return found
        }
        var improved = true
        while improved && replays < budget {
            improved = false
            for span in [64, 16, 4, 1] {
                var start = 0
                while start < best.count && replays < budget {
                    var candidate = best
                    candidate.removeSubrange(start..<min(best.count, start + span))
                    if let found = stillFails(candidate) {
                        best = candidate
                        bestViolation = found
                        improved = true
                    } else {
                        start += span
                    }
                }
            }
            var index = 0
            while index < best.count && replays < budget {
                if best[index] != 0 {
                    var candidate = best
                    candidate[index] = 0
                    if let found = stillFails(candidate) {
                        best = candidate
                        bestViolation = found
                        improved = true
                    }
                }
                index += 1
            }
        }
        let final = Simulation(options: options, choices: ChoiceSource(script: best))
        _ = final.run()
        return Result(choices: best, violation: bestViolation, trace: final.trace, replays: replays)
    }
}
