import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderCore
import UploaderConfig
@testable import UploaderSpool

/// `after_send = delete` on the simulated disk: a delivered file filed to sent/ and removed again,
/// with a crash (kill -9, or a power cut in either disk model) at every operation, then start-up as
/// the daemon runs it. A deletion that was due is always finished — found without reading sent/ —
/// and a file whose `on_sent` hook is due is never removed before the hook's run is recorded.
@Suite struct SimDiskAfterSendTests {
    static let payload = SimDiskTesting.bytes("the delivered payload")
    static let path = RelativePath("a.bin")

    /// One spool with `after_send = delete`, `a.bin` claimed and its attempt begun (all durable),
    /// and its record as a delivery leaves it (with `on_sent` due when `hook`).
    struct Scenario {
        let disk: SimDisk
        let spool: Spool
        let lifecycle: FileLifecycle
        let claimer: Claimer
        let manifest: Manifest

        init(_ model: SimDisk.Model, hook: Bool) throws {
            disk = SimDiskTesting.disk(model)
            spool = Spool(paths: SpoolPaths(root: "/spool"), fs: disk, temporaries: TemporaryNames(start: 0))
            let logger = Logger(level: .error, sink: { _ in })
            lifecycle = FileLifecycle(spool: spool, logger: logger, afterSend: .delete)
            claimer = Claimer(spool: spool, profileName: "sim", digest: .sha256, mimeTypes: MimeTypes(byExtension: [:]),
                              lifecycle: lifecycle, logger: logger)
            try spool.prepare()
            var sent = try SimDiskTesting.begunAttempt(SimDiskAfterSendTests.path, data: SimDiskAfterSendTests.payload, ending: .sent,
                                                       on: disk, spool, lifecycle, claimer)
            sent.sentAt = Timestamp.format(SimDiskTesting.start)
            if hook { sent.markHookDue() }
            manifest = sent
        }

        func finish() throws {
            try lifecycle.finish(SimDiskAfterSendTests.path, manifest: manifest, to: .sent)
        }

        /// Start-up: recovery's scan, the markers still to run, then a claim of each file; returns
        /// the markers start-up runs and those of the moves the claims finished (the daemon queues
        /// both).
        @discardableResult
        func startUp() -> [HookLedger.Marker] {
            let files = SimDiskTesting.recovery(spool, lifecycle).scanOutbox().files
            var due = HookLedger(spool: spool).dueMarkers(afterSend: .delete) { _ in }
            for file in files {
                if case .finishedByRecovery(let area, let target, _, _) = claimer.claim(file, now: SimDiskTesting.start),
                   !due.contains(where: { $0.path == target }) {
                    due.append(HookLedger.Marker(area: area, path: target, hook: "on_sent"))
                }
            }
            return due
        }

        /// What `DueHookRun` does for a marker once the hook has run: its end recorded durably
        /// (when still due), the file and its manifest removed, the marker dropped.
        func runDue(_ markers: [HookLedger.Marker]) throws {
            for marker in markers {
                if case .success(var m) = spool.readManifest(for: marker.path, in: .sent), m.dueHook != nil {
                    m.recordHookStart("on_sent", at: SimDiskTesting.start)
                    m.recordHookEnd("on_sent", at: SimDiskTesting.start, exitStatus: 0)
                    try spool.writeManifest(m, for: marker.path, in: .sent, syncDirectory: true)
                }
                try lifecycle.removeDelivered(marker.path)
                try HookLedger(spool: spool).remove(marker)
            }
        }

        var payloadPlaces: [String] {
            SimDiskTesting.files(on: disk, below: "/spool").filter { $0.value == SimDiskAfterSendTests.payload }.keys.sorted()
        }
        var inSent: [String] { disk.names(in: "/spool/sent") }
        var outbox: [String] { disk.names(in: "/spool/outbox") }
        var quarantined: [String] { disk.names(in: "/spool/.quarantine") }
        var counted: Int { (try? spool.sentLedger.recent(now: SimDiskTesting.start).files) ?? -1 }
    }

    private func length(_ model: SimDisk.Model, hook: Bool) throws -> Int {
        let scenario = try Scenario(model, hook: hook)
        let before = scenario.disk.operations
        try scenario.finish()
        return scenario.disk.operations - before
    }

    /// Every crash point of `finish` (and one past the end), a kill -9 or `seeds` power cuts.
    private func everyCrash(_ model: SimDisk.Model, hook: Bool, powerCut: Bool, seeds: Int = 1,
                            check: (String, Scenario) throws -> Void) throws {
        for k in 0...(try length(model, hook: hook)) {
            for seed in 0..<UInt64(powerCut ? seeds : 1) {
                let scenario = try Scenario(model, hook: hook)
                scenario.disk.crash(atOperation: scenario.disk.operations + k)
                try? scenario.finish()
                if powerCut {
                    var rng = SplitMix64(seed: seed)
                    scenario.disk.powerCut(&rng)
                } else {
                    scenario.disk.killProcess()
                }
                try check("\(powerCut ? "power cut" : "kill -9") at \(k), seed \(seed)", scenario)
            }
        }
    }

    /// Without a hook: after start-up the file is gone from sent/ with its manifest (delivered and
    /// deleted), or back in the outbox to be sent again (its record never became durable); never
    /// left in sent/, never a record moved aside, counted at most once.
    private func deletedOrQueued(_ cut: String, _ scenario: Scenario) {
        #expect(scenario.inSent == [], "\(cut): \(scenario.inSent) left in sent/")
        #expect(scenario.payloadPlaces.allSatisfy { $0 == "/spool/outbox/a.bin" }, "\(cut): \(scenario.payloadPlaces)")
        if scenario.payloadPlaces.isEmpty { #expect(scenario.outbox == [".upl-tmp"], "\(cut): \(scenario.outbox)") }
        #expect(scenario.quarantined == [], "\(cut): \(scenario.quarantined)")
        #expect(scenario.counted <= 1, "\(cut): counted \(scenario.counted) times")
    }

    @Test func finishedUndisturbedTheFileIsDeliveredCountedAndGone() throws {
        let scenario = try Scenario(.journalled, hook: false)
        try scenario.finish()
        #expect(scenario.payloadPlaces == [] && scenario.inSent == [] && scenario.outbox == [".upl-tmp"])
        #expect(scenario.counted == 1)
    }

    @Test(arguments: [SimDisk.Model.journalled, .noJournal])
    func withoutAHookADeletionCutAnywhereIsFinishedAtStartUp(_ model: SimDisk.Model) throws {
        var deleted = 0
        try everyCrash(model, hook: false, powerCut: false) { cut, scenario in
            scenario.startUp()
            deletedOrQueued(cut, scenario)
            if scenario.payloadPlaces.isEmpty {
                deleted += 1
            }
        }
        #expect(deleted > 0, "some crash points leave a deletion for start-up to finish")
        try everyCrash(model, hook: false, powerCut: true, seeds: 30) { cut, scenario in
            scenario.startUp()
            deletedOrQueued(cut, scenario)
        }
    }

    @Test(arguments: [SimDisk.Model.journalled, .noJournal])
    func withoutAHookAFinishKilledAnywhereThenItsStartUpCutByAPowerCutIsFinishedNext(_ model: SimDisk.Model) throws {
        try SimDiskTesting.killedThenRecoveryCut(operations: try length(model, hook: false), make: { try Scenario(model, hook: false) },
                                                 disk: \.disk, run: { try $0.finish() }, recover: { $0.startUp() }) { scenario, cut in
            deletedOrQueued(cut, scenario)
        }
    }

    @Test(arguments: [SimDisk.Model.journalled, .noJournal])
    func withAHookDueTheFileStaysUntilItsRunIsRecordedAndGoesAfter(_ model: SimDisk.Model) throws {
        for powerCut in [false, true] {
            try everyCrash(model, hook: true, powerCut: powerCut, seeds: 20) { cut, scenario in
                let markers = scenario.startUp()
                // The hook has not run: the file is somewhere, once — in sent/ (its hook due) or queued again.
                #expect(scenario.payloadPlaces.count == 1, "\(cut): \(scenario.payloadPlaces)")
                if scenario.inSent.contains("a.bin") {
                    #expect(markers.map(\.path) == [SimDiskAfterSendTests.path], "\(cut): a file in sent/ with nothing to remove it")
                }
                try scenario.runDue(markers)
                #expect(scenario.inSent == [], "\(cut): \(scenario.inSent) left in sent/ after its hook")
                #expect(scenario.quarantined == [], "\(cut)")
            }
        }
    }

    @Test(arguments: [SimDisk.Model.journalled, .noJournal])
    func aDeletionAfterTheHookCutAnywhereIsFinishedAtStartUp(_ model: SimDisk.Model) throws {
        /// Filed with its hook due, then the hook's run recorded and the deletion run as `DueHookRun` does.
        func filed() throws -> (Scenario, [HookLedger.Marker]) {
            let scenario = try Scenario(model, hook: true)
            try scenario.finish()
            let markers = HookLedger(spool: scenario.spool).dueMarkers(afterSend: .delete) { _ in }
            try scenario.disk.syncAll()
            return (scenario, markers)
        }
        let (probe, probeMarkers) = try filed()
        let before = probe.disk.operations
        try probe.runDue(probeMarkers)
        let operations = probe.disk.operations - before
        #expect(probe.inSent == [] && probe.disk.names(in: "/spool/.hooks-due") == [])
        for k in 0...operations {
            for seed in 0..<UInt64(20) {
                let (scenario, markers) = try filed()
                scenario.disk.crash(atOperation: scenario.disk.operations + k)
                try? scenario.runDue(markers)
                var rng = SplitMix64(seed: seed)
                if seed == 0 { scenario.disk.killProcess() } else { scenario.disk.powerCut(&rng) }
                let due = scenario.startUp()
                let cut = "cut at \(k), seed \(seed)"
                if !scenario.inSent.isEmpty { #expect(due.count == 1, "\(cut): \(scenario.inSent) in sent/ with no marker") }
                try scenario.runDue(due)
                #expect(scenario.inSent == [], "\(cut): \(scenario.inSent)")
                #expect(scenario.payloadPlaces == [], "\(cut): \(scenario.payloadPlaces)")
            }
        }
    }

    /// The deletion after a hook's run with its last fsync of sent/ refused (EIO), the process then
    /// killed, start-up run, and power cuts after it: the manifest's unlink is made durable before
    /// start-up drops the marker, so no manifest comes back alone in sent/ with nothing left to
    /// remove it (noJournal seed 40000036 of the simulator: the marker went, a power cut brought
    /// the manifest back, its file gone).
    @Test(arguments: [SimDisk.Model.journalled, .noJournal])
    func aDeletionWhoseLastSyncFailedLeavesNoManifestAloneAfterStartUpAndAPowerCut(_ model: SimDisk.Model) throws {
        for seed in 0..<UInt64(24) {
            let scenario = try Scenario(model, hook: true)
            try scenario.finish()
            let markers = HookLedger(spool: scenario.spool).dueMarkers(afterSend: .delete) { _ in }
            try scenario.disk.syncAll()
            let disk = scenario.disk
            // The fsync of sent/ after the manifest's unlink, and only that one, fails.
            disk.injectFaults { site in
                site == .directorySync && !disk.exists(path: "/spool/sent/a.bin.manifest.json") ? .ioError : .none
            }
            #expect(throws: (any Error).self, "the last fsync of sent/ fails") { try scenario.runDue(markers) }
            scenario.disk.injectFaults(nil)
            #expect(scenario.inSent == [], "the deletion ran up to its last fsync")
            scenario.disk.killProcess()
            scenario.startUp()
            var rng = SplitMix64(seed: seed)
            scenario.disk.powerCut(&rng)
            let due = scenario.startUp()
            try scenario.runDue(due)
            #expect(scenario.inSent == [], "seed \(seed): \(scenario.inSent) alone in sent/")
            #expect(scenario.payloadPlaces == [], "seed \(seed): \(scenario.payloadPlaces)")
        }
    }

    /// The move (no hook) killed anywhere, and the producer then puts a symlink under the outbox
    /// name: start-up never leaves a manifest in sent/ without its file (noJournal seed 10011420 of
    /// the simulator: the deletion was cut between its two unlinks, the claim met the symlink and
    /// moved the outbox record aside, and the delivered file's manifest stayed alone in sent/).
    @Test(arguments: [SimDisk.Model.journalled, .noJournal])
    func aDeletionCutBeforeTheOutboxNameBecameASymlinkLeavesNoManifestAloneInSent(_ model: SimDisk.Model) throws {
        var cutBetweenTheUnlinks = 0
        try everyCrash(model, hook: false, powerCut: false) { cut, scenario in
            let disk = scenario.disk
            if !disk.exists(path: "/spool/sent/a.bin") && disk.exists(path: "/spool/sent/a.bin.manifest.json") { cutBetweenTheUnlinks += 1 }
            if disk.exists(path: "/spool/outbox/a.bin") { try disk.remove("/spool/outbox/a.bin") }
            #expect(disk.makeSymlink("/spool/outbox/a.bin", to: "/etc/passwd"))
            scenario.startUp()
            let alone = scenario.inSent.filter { $0.hasSuffix(Spool.manifestSuffix) && !scenario.inSent.contains(String($0.dropLast(Spool.manifestSuffix.count))) }
            #expect(alone.isEmpty, "\(cut): \(alone) alone in sent/")
            #expect(!disk.exists(path: "/spool/outbox/a.bin.manifest.json"), "\(cut): the record stays beside the symlink")
        }
        #expect(cutBetweenTheUnlinks > 0, "no cut fell between the deletion's two unlinks")
    }

    /// A delivery in a subdirectory whose move into sent/ was cut before its directory there was
    /// made, the producer then removing the file: start-up finishes the deletion (the record goes)
    /// rather than failing for ever on the directory that never was (journalled seed 16009166 of
    /// the simulator: the record stayed in the outbox).
    @Test(arguments: [SimDisk.Model.journalled, .noJournal])
    func aDeletionWhoseDirectoryInSentWasNeverMadeIsFinished(_ model: SimDisk.Model) throws {
        let disk = SimDiskTesting.disk(model)
        let spool = Spool(paths: SpoolPaths(root: "/spool"), fs: disk, temporaries: TemporaryNames(start: 0))
        let logger = Logger(level: .error, sink: { _ in })
        let lifecycle = FileLifecycle(spool: spool, logger: logger, afterSend: .delete)
        let claimer = Claimer(spool: spool, profileName: "sim", digest: .sha256, mimeTypes: MimeTypes(byExtension: [:]),
                              lifecycle: lifecycle, logger: logger)
        try spool.prepare()
        let path = RelativePath("d/a.bin")
        var record = try SimDiskTesting.begunAttempt(path, data: Self.payload, ending: .sent, on: disk, spool, lifecycle, claimer)
        record.storedAs = spool.storedAs(path, in: .sent)
        try spool.writeManifest(record, for: path, in: .outbox, syncDirectory: true)
        try disk.remove("/spool/outbox/d/a.bin")
        #expect(!disk.exists(path: "/spool/sent/d"))
        _ = SimDiskTesting.recovery(spool, lifecycle).scanOutbox()
        #expect(!disk.exists(path: "/spool/outbox/d/a.bin.manifest.json"), "the delivered file's record stays in the outbox")
        #expect(disk.names(in: "/spool/.quarantine").isEmpty)
    }
}

