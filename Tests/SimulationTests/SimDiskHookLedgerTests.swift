import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderCore
import UploaderConfig
@testable import UploaderSpool

/// The hooks-due markers on the simulated disk: a file filed to sent/ with `on_sent` due, a
/// crash at every operation of `finish`, a kill -9 or a power cut in either disk model, then
/// start-up as the daemon runs it (recovery's scan, the markers sorted out, the claims). After
/// that, a manifest in sent/ with its hook due always has its marker: start-up finds every
/// hook still to run without reading sent/.
@Suite struct SimDiskHookLedgerTests {
    /// `SimDiskLifecycleTests`' scenario (a.bin claimed, its attempt begun, all durable), filed
    /// with `on_sent` due.
    struct Scenario {
        let base: SimDiskLifecycleTests.Scenario
        let manifest: Manifest
        static let path = RelativePath("a.bin")
        var disk: SimDisk { base.disk }
        var spool: Spool { base.spool }
        var lifecycle: FileLifecycle { base.lifecycle }
        var claimer: Claimer { base.claimer }

        init(_ model: SimDisk.Model) throws {
            base = try SimDiskLifecycleTests.Scenario(model, path: Self.path)
            var sent = base.manifest
            sent.markHookDue()
            manifest = sent
        }

        /// Start-up: recovery's scan, the markers (stale ones dropped), then a claim of each file.
        func startUp() -> [HookLedger.Marker] {
            let files = SimDiskTesting.recovery(spool, lifecycle).scanOutbox().files
            let due = HookLedger(spool: spool).dueMarkers { _ in }
            for file in files { _ = claimer.claim(file, now: SimDiskTesting.start) }
            return due
        }

        /// The hook due in sent/, if the manifest is there and has it due.
        var dueInSent: Bool {
            guard let data = disk.contents("/spool/sent/a.bin.manifest.json"), let m = try? Manifest.decode(Data(data)) else { return false }
            return m.dueHook == "on_sent"
        }

        var hasMarker: Bool { !HookLedger(spool: spool).markers { _ in }.isEmpty }

        /// The file is back in the outbox, not filed: it is uploaded again (and filed then).
        var queuedAgain: Bool { disk.exists(path: "/spool/outbox/a.bin") && !disk.exists(path: "/spool/sent/a.bin") }
    }

    private func length(_ model: SimDisk.Model) throws -> Int {
        let scenario = try Scenario(model)
        let before = scenario.disk.operations
        try scenario.lifecycle.finish(Scenario.path, manifest: scenario.manifest, to: .sent)
        return scenario.disk.operations - before
    }

    /// Every crash point of `finish`, then `cut` (kill -9 or a power cut), then start-up.
    private func everyCrash(_ model: SimDisk.Model, seeds: Int, cut: (SimDisk, UInt64) -> Void,
                            check: (Int, UInt64, Scenario, [HookLedger.Marker]) -> Void) throws {
        for k in 0...(try length(model)) {
            for seed in 0..<UInt64(seeds) {
                let scenario = try Scenario(model)
                scenario.disk.crash(atOperation: scenario.disk.operations + k)
                _ = try? scenario.lifecycle.finish(Scenario.path, manifest: scenario.manifest, to: .sent)
                cut(scenario.disk, seed)
                // What start-up will look for: a due manifest in sent/ with no marker would be lost to it.
                let lost = scenario.dueInSent && !scenario.hasMarker
                #expect(!lost, "crash at \(k), seed \(seed): a due hook only in sent/, before start-up")
                let due = scenario.startUp()
                check(k, seed, scenario, due)
            }
        }
    }

    @Test(arguments: [SimDisk.Model.journalled, .noJournal])
    func afterAKillAtAnyPointAHookDueInSentHasItsMarker(_ model: SimDisk.Model) throws {
        var filed = 0
        try everyCrash(model, seeds: 1, cut: { disk, _ in disk.killProcess() }) { k, _, scenario, _ in
            let due = scenario.dueInSent, marked = scenario.hasMarker, queued = scenario.queuedAgain
            #expect(due || queued, "crash at \(k): filed with its hook due, or still queued to be sent again")
            #expect(due == marked, "crash at \(k): a marker exactly when a hook is due in sent/ (due \(due), marker \(marked))")
            if due { filed += 1 }
        }
        #expect(filed > 0, "some crash points leave the file filed by recovery")
    }

    @Test(arguments: [SimDisk.Model.journalled, .noJournal])
    func afterAPowerCutAtAnyPointAHookDueInSentHasItsMarker(_ model: SimDisk.Model) throws {
        try everyCrash(model, seeds: 40, cut: { disk, seed in
            var rng = SplitMix64(seed: seed)
            disk.powerCut(&rng)
        }) { k, seed, scenario, markers in
            let due = scenario.dueInSent, marked = scenario.hasMarker
            #expect(!due || marked, "crash at \(k), seed \(seed): a due hook without its marker")
            for marker in markers { #expect(marker.path == Scenario.path && marker.area == .sent, "crash at \(k), seed \(seed)") }
        }
    }

    /// `.hooks-due/` made by a process that died before it fsynced the spool's root (or had that
    /// fsync refused): the next process's first marker makes the directory's entry durable, so no
    /// power cut takes the directory and its markers away (noJournal seed 902172: an EIO on that
    /// fsync, and `on_sent` never ran).
    @Test func aMarkerInADirectoryAnEarlierProcessLeftUnsyncedSurvivesAPowerCut() throws {
        var lost: [UInt64] = []
        for seed in 0..<64 as Range<UInt64> {
            let scenario = try Scenario(.noJournal)
            try scenario.disk.makeDirectories("/spool/.hooks-due")
            try HookLedger(spool: scenario.spool).ensureMarker(for: scenario.manifest, at: Scenario.path, in: .sent)
            var rng = SplitMix64(seed: seed)
            scenario.disk.powerCut(&rng)
            if !scenario.hasMarker { lost.append(seed) }
        }
        #expect(lost.isEmpty, "the marker was lost after the power cuts of seeds \(lost)")
    }
}
