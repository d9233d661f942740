import Foundation
@testable import UploaderSimulation
import UploaderSupport
import UploaderCore
import UploaderConfig
import UploaderSpool

/// What the disk tests share: a disk on a fixed clock, durable starting states, power cuts over
/// many seeds (with the core's `SplitMix64`), and a picture of every regular file below a
/// directory, to compare the states a power cut leaves.
enum SimDiskTesting {
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    static func disk(_ model: SimDisk.Model) -> SimDisk {
        SimDisk(model: model, now: { start })
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// The real spool code on `disk`: a prepared spool at /spool, its lifecycle and a claimer.
    static func spool(on disk: SimDisk) throws -> (Spool, FileLifecycle, Claimer) {
        let spool = Spool(paths: SpoolPaths(root: "/spool"), fs: disk, temporaries: TemporaryNames(start: 0))
        let logger = Logger(level: .error, sink: { _ in })
        let lifecycle = FileLifecycle(spool: spool, logger: logger)
        let claimer = Claimer(spool: spool, profileName: "sim", digest: .sha256, mimeTypes: MimeTypes(byExtension: [:]),
                              lifecycle: lifecycle, logger: logger)
        try spool.prepare()
        return (spool, lifecycle, claimer)
    }

    /// Makes `directories` and `files` (path → text), then makes all of it durable.
    static func durable(_ disk: SimDisk, directories: [String], files: KeyValuePairs<String, String> = [:]) throws {
        for directory in directories { try disk.makeDirectories(directory) }
        for (path, text) in files { disk.createFile(path, data: bytes(text), sync: true) }
        try disk.syncAll()
    }

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

/// A clock that does not move, for the recovery the tests run.
struct FixedClock: Clock {
    var now: Date { SimDiskTesting.start }
    var monotonic: Double { 0 }
}
