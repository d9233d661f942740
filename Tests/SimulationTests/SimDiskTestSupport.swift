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
    static func spool(on disk: SimDisk, foundBeside: @escaping @Sendable (RelativePath) -> Void = { _ in })
        throws -> (Spool, FileLifecycle, Claimer) {
        let spool = Spool(paths: SpoolPaths(root: "/spool"), fs: disk, temporaries: TemporaryNames(start: 0))
        let logger = Logger(level: .error, sink: { _ in })
        let lifecycle = FileLifecycle(spool: spool, logger: logger)
        let claimer = Claimer(spool: spool, profileName: "sim", digest: .sha256, mimeTypes: MimeTypes(byExtension: [:]),
                              lifecycle: lifecycle, logger: logger, foundBeside: foundBeside)
        try spool.prepare()
        return (spool, lifecycle, claimer)
    }

    /// Drops `data` as `path` in the outbox, claims it and begins its attempt, all of it durable;
    /// returns its record as that attempt's end would leave it, in `state`.
    static func begunAttempt(_ path: RelativePath, data: [UInt8], ending state: Manifest.State, on disk: SimDisk,
                             _ spool: Spool, _ lifecycle: FileLifecycle, _ claimer: Claimer) throws -> Manifest {
        try disk.makeParents(of: path, in: spool.paths.outbox)
        disk.createFile(path.displayed(in: spool.paths.outbox), data: data, sync: true)
        try disk.syncAll()
        guard case .ready(let file) = claimer.claim(path, now: start) else {
            throw SystemError("claim", path: path.display, code: .invalid)
        }
        try lifecycle.beginAttempt(file, now: start)
        try disk.syncAll()
        var ended = file.manifest
        ended.state = state
        ended.closeOpenAttempt(at: start, interrupted: false)
        return ended
    }

    /// `data` delivered as `a.bin` and its move into sent/ cut after its links and the removal of
    /// the file's outbox name: the outbox holds the `sent` record alone, sent/ the file and a second
    /// name of that record. Returns the record.
    static func moveToSentCutAfterLinks(_ data: [UInt8], on disk: SimDisk, _ spool: Spool, _ lifecycle: FileLifecycle,
                                        _ claimer: Claimer) throws -> Manifest {
        let path = RelativePath("a.bin")
        var record = try begunAttempt(path, data: data, ending: .sent, on: disk, spool, lifecycle, claimer)
        record.storedAs = spool.storedAs(path, in: .sent)
        try spool.writeManifest(record, for: path, in: .outbox, syncDirectory: true)
        try disk.link("/spool/outbox/a.bin", "/spool/sent/a.bin")
        try disk.link("/spool/outbox/a.bin.manifest.json", "/spool/sent/a.bin.manifest.json")
        try disk.remove("/spool/outbox/a.bin")
        return record
    }

    /// The start-up's recovery on `spool`, as the daemon makes it, logging nowhere, its clock still.
    static func recovery(_ spool: Spool, _ lifecycle: FileLifecycle) -> Recovery {
        Recovery(spool: spool, lifecycle: lifecycle, ignore: IgnoreRules(patterns: []), recursive: true,
                 logger: Logger(level: .error, sink: { _ in }), clock: FixedClock())
    }

    /// `run` killed (kill -9) at each of its `operations`, the start-up after it (`recover`) cut by
    /// a power cut at each of its first 12 operations (8 seeds each), then one more start-up:
    /// `check` gets each scenario and where it was cut (simulator seed 95369 had this shape).
    static func killedThenRecoveryCut<Scenario>(operations: Int, make: () throws -> Scenario, disk: (Scenario) -> SimDisk,
                                               run: (Scenario) throws -> Void, recover: (Scenario) -> Void,
                                               check: (Scenario, String) -> Void) throws {
        precondition(operations > 0, "nothing to kill")
        for k in 0..<operations {
            for j in 0..<12 {
                for seed in 0..<UInt64(8) {
                    let scenario = try make()
                    let disk = disk(scenario)
                    disk.crash(atOperation: disk.operations + k)
                    try? run(scenario)
                    disk.killProcess()
                    disk.crash(atOperation: disk.operations + j)
                    recover(scenario)
                    var rng = SplitMix64(seed: seed)
                    disk.powerCut(&rng)
                    recover(scenario)
                    check(scenario, "killed at operation \(k), recovery cut at \(j), power cut seed \(seed)")
                }
            }
        }
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

    /// The operations of `run` cut at each of which (then `runs` power cuts, one per seed) some
    /// outcome is `bad`; each time on a disk `layOut` prepares afresh, `run` given what it returned.
    static func cutsLeaving<Laid>(_ model: SimDisk.Model, runs: Int = 40, layOut: (SimDisk) throws -> Laid,
                                  run: (Laid) throws -> Void, bad: (SimDisk) -> Bool) throws -> [Int] {
        let whole = disk(model)
        let laid = try layOut(whole)
        let before = whole.operations
        try? run(laid)
        let length = whole.operations - before
        return try (0...length).filter { k in
            try powerCutOutcomes(model, runs: runs, setUp: { disk in
                let laid = try layOut(disk)
                disk.crash(atOperation: disk.operations + k)
                try? run(laid)
            }, outcome: bad).contains(true)
        }
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

    func wait(for latch: Latch?, until deadline: Double) -> Bool {
        precondition(deadline <= monotonic || latch?.isOpen == true, "a clock that does not move never reaches a later deadline")
        return latch?.isOpen ?? false
    }
}
