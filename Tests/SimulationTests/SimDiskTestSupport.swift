import Foundation
@testable import UploaderSimulation
import UploaderSupport

/// What the disk tests share: a disk on a fixed clock, a seeded generator, and a picture of
/// every regular file below a directory, to compare the states a power cut leaves.
enum SimDiskTesting {
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    static func disk(_ model: SimDisk.Model) -> SimDisk {
        SimDisk(model: model, now: { start })
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Every regular file below `root`, path → content (volatile view).
    static func files(on disk: SimDisk, below root: String) -> [String: [UInt8]] {
        var found: [String: [UInt8]] = [:]
        for name in disk.names(in: root) {
            let path = root == "/" ? "/" + name : root + "/" + name
            if let data = disk.contents(path) {
                found[path] = data
            } else {
                found.merge(files(on: disk, below: path)) { first, _ in first }
            }
        }
        return found
    }

    /// The outcomes of `runs` power cuts, one per seed, each on a disk `setUp` prepares afresh.
    static func powerCutOutcomes<T: Hashable>(_ model: SimDisk.Model, runs: Int = 200, setUp: (SimDisk) throws -> Void,
                                             outcome: (SimDisk) -> T) rethrows -> Set<T> {
        var seen: Set<T> = []
        for seed in 0..<UInt64(runs) {
            let disk = disk(model)
            try setUp(disk)
            var rng = SplitMix64(seed: seed)
            disk.powerCut(&rng)
            seen.insert(outcome(disk))
        }
        return seen
    }
}

/// A small seeded generator (SplitMix64), so every power cut in a test can be replayed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A clock that does not move, for the recovery the tests run.
struct FixedClock: Clock {
    var now: Date { SimDiskTesting.start }
    var monotonic: Double { 0 }
}
