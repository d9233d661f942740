import Synchronization
import UploaderCore

/// Every decision of a schedule, drawn from one seeded stream and recorded, so a run replays
/// exactly and a failing run can be shrunk by editing the recorded choices (as Hypothesis does):
/// a shorter or simpler choice list that still breaks the same invariant is a smaller schedule.
final class ChoiceSource: @unchecked Sendable {
    // Used by one thread at a time: the simulator's, or the job thread it handed the baton to.
    private var generator: SplitMix64
    /// When replaying an edited list: the choices to take, in order; past its end every draw is 0.
    private let script: [UInt64]?
    private(set) var drawn: [UInt64] = []

    init(seed: UInt64) {
        generator = SplitMix64(seed: seed)
        script = nil
    }

    init(script: [UInt64]) {
        generator = SplitMix64(seed: 0)
        self.script = script
    }

    /// A raw draw.
    func next() -> UInt64 {
        let value: UInt64
        if let script {
            value = drawn.count < script.count ? script[drawn.count] : 0
        } else {
            value = generator.next()
        }
        drawn.append(value)
        return value
    }

    /// 0 ..< n (0 when n is 0).
    func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt64(n)) }

    /// True with probability `percent`/100; a draw of 0 (what shrinking writes) is always false.
    func chance(_ percent: Int) -> Bool {
        let v = next()
        return v != 0 && Int(v % 100) < percent
    }

    /// One of `weights.count` options, each as likely as its weight; a draw of 0 takes the first.
    func pick(_ weights: [Int]) -> Int {
        let total = weights.reduce(0, +)
        guard total > 0 else { return 0 }
        var roll = Int(next() % UInt64(total))
        for (i, w) in weights.enumerated() {
            if roll < w { return i }
            roll -= w
        }
        return weights.count - 1
    }
}

/// A seeded generator for the disk's power-cut choices, fed from the choice source.
struct ChoiceGenerator: RandomNumberGenerator {
    let source: ChoiceSource
    mutating func next() -> UInt64 { source.next() }
}
