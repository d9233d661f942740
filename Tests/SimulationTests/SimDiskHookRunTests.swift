@preconcurrency import Glibc
import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
@testable import UploaderCore
import UploaderConfig
import UploaderValues
@testable import UploaderSpool

/// A hook due whose move into sent/ is not finished (its record still in the outbox: a kill -9
/// cut the move, and the start-up's recovery could not finish it, a disk error), run by
/// `DueHookRun` before the claim that finishes the move: whatever point the move was cut at, the
/// claim then finishes it, and the file ends in sent/ only, its hook run.
@Suite struct SimDiskHookRunTests {
    /// Each hook job run at once on the caller's thread; each command exits 0, and is counted.
    final class InlineHooks: HookHost, @unchecked Sendable {
        // Used by the test's one thread.
        var launched = 0
        func async(_ job: @escaping @Sendable () -> Void) { job() }
        func waitUntilIdle(deadline: DispatchTime) -> Bool { true }
        func launch(_ process: HookProcess, clock: any Clock, started: (pid_t?) -> Void) -> HookProcess.Outcome {
            launched += 1
            return .exited(0)
        }
    }

    static func profile() throws -> Profile {
        var profile = Profile(name: "sim", spool: SpoolPaths(root: "/spool"),
                              destination: .http(URLTemplate(try Template(parsing: "http://127.0.0.1:1/{path}"))))
        profile.onSent = "sim-on-sent"
        return profile
    }

    @Test(arguments: [SimDisk.Model.journalled, .noJournal])
    func aHookRunBeforeItsMoveIsFinishedLeavesTheMoveFinishable(_ model: SimDisk.Model) throws {
        let whole = try SimDiskHookLedgerTests.Scenario(model)
        let before = whole.disk.operations
        try whole.lifecycle.finish(SimDiskHookLedgerTests.Scenario.path, manifest: whole.manifest, to: .sent)
        let length = whole.disk.operations - before
        var ranBeforeTheMoveEnded = 0
        for k in 0...length {
            let scenario = try SimDiskHookLedgerTests.Scenario(model)
            let disk = scenario.disk
            disk.crash(atOperation: disk.operations + k)
            _ = try? scenario.lifecycle.finish(SimDiskHookLedgerTests.Scenario.path, manifest: scenario.manifest, to: .sent)
            disk.killProcess()
            let host = InlineHooks()
            let runner = HookRunner(clock: FixedClock(), host: host)
            let logger = Logger(level: .error, sink: { _ in })
            for marker in HookLedger(spool: scenario.spool).dueMarkers(problem: { _ in }) {
                DueHookRun(profile: try Self.profile(), spool: scenario.spool, hooks: runner, environment: [:], logger: logger).run(marker)
            }
            if disk.exists(path: "/spool/outbox/a.bin.manifest.json") { ranBeforeTheMoveEnded += host.launched }
            var claims: [Claimer.Outcome] = []
            for file in SimDiskTesting.recovery(scenario.spool, scenario.lifecycle).scanOutbox().files {
                claims.append(scenario.claimer.claim(file, now: SimDiskTesting.start))
            }
            let inOutbox = disk.exists(path: "/spool/outbox/a.bin"), inSent = disk.exists(path: "/spool/sent/a.bin")
            #expect(!(inOutbox && inSent), "killed at operation \(k): a.bin in the outbox and in sent/; claims: \(claims)")
            #expect(!claims.contains { switch $0 { case .refused, .refusedForNow: true; default: false } }, "killed at operation \(k): \(claims)")
        }
        // The scenario reaches the case: the hook's marker is written before the move's links.
        #expect(ranBeforeTheMoveEnded == 0, "a hook ran while its file's move was unfinished")
    }

    /// The move filed a.bin in sent/ but for its outbox record (a disk error or a kill before that
    /// last unlink), and the producer put a new file under the outbox name: the filed file's hook
    /// runs; while the outbox name still leads to the filed file, it waits for the move (journalled
    /// seed 1000403 of the simulator: it waited for a move no one would finish, and never ran).
    @Test(arguments: [true, false])
    func aHookRunsOnceTheOutboxNameHoldsAnotherFile(_ newFileThere: Bool) throws {
        let scenario = try SimDiskHookLedgerTests.Scenario(.journalled)
        try scenario.lifecycle.finish(SimDiskHookLedgerTests.Scenario.path, manifest: scenario.manifest, to: .sent)
        let disk = scenario.disk
        let record = try Manifest.decode(Data(try #require(disk.contents("/spool/sent/a.bin.manifest.json"))))
        try scenario.spool.writeManifest(record, for: SimDiskHookLedgerTests.Scenario.path, in: .outbox)
        if newFileThere {
            #expect(disk.createFile("/spool/outbox/a.bin", data: SimDiskTesting.bytes("the producer's new file"), sync: true))
        } else {
            try disk.link("/spool/sent/a.bin", "/spool/outbox/a.bin")
        }
        let host = InlineHooks()
        let runner = HookRunner(clock: FixedClock(), host: host)
        for marker in HookLedger(spool: scenario.spool).dueMarkers(problem: { _ in }) {
            DueHookRun(profile: try Self.profile(), spool: scenario.spool, hooks: runner, environment: [:],
                       logger: Logger(level: .error, sink: { _ in })).run(marker)
        }
        #expect(host.launched == (newFileThere ? 1 : 0))
    }

    /// With `after_send = delete`, a file filed in sent/ whose bytes there are no longer what was
    /// sent (a power cut undid the producer's write it never made durable, leaving the older,
    /// shorter version) goes back to the outbox to be sent again, not deleted with the delivered
    /// record (journalled seed 5001800 of the simulator: the older version was deleted unsent).
    /// `cutAfterLink`: an earlier run had linked it back to the outbox and was cut there; it comes
    /// back under that name, not a second one.
    @Test(arguments: [SimDisk.Model.journalled, .noJournal], [false, true])
    func withAfterSendDeleteBytesInSentThatWereNotSentGoBackToTheOutbox(_ model: SimDisk.Model, _ cutAfterLink: Bool) throws {
        let scenario = try SimDiskHookLedgerTests.Scenario(model)
        try scenario.lifecycle.finish(SimDiskHookLedgerTests.Scenario.path, manifest: scenario.manifest, to: .sent)
        let disk = scenario.disk
        let older = Array(SimDiskLifecycleTests.payload.prefix(3))
        #expect(disk.writeInPlace("/spool/sent/a.bin", data: older))
        if cutAfterLink { try disk.link("/spool/sent/a.bin", "/spool/outbox/a.bin") }
        var profile = try Self.profile()
        profile.afterSend = .delete
        let host = InlineHooks()
        let logger = Logger(level: .error, sink: { _ in })
        let markers = HookLedger(spool: scenario.spool).dueMarkers(problem: { _ in })
        #expect(markers.count == 1)
        for marker in markers {
            DueHookRun(profile: profile, spool: scenario.spool, hooks: HookRunner(clock: FixedClock(), host: host), environment: [:],
                       logger: logger).run(marker)
        }
        #expect(host.launched == 1, "on_sent ran for the delivery")
        #expect(!disk.exists(path: "/spool/sent/a.bin") && !disk.exists(path: "/spool/sent/a.bin.manifest.json"))
        #expect(disk.contents("/spool/outbox/a.bin") == older, "the bytes never sent are back in the outbox")
        #expect(!disk.exists(path: "/spool/outbox/a.2.bin"), "the file came back under a second name")
        #expect(!scenario.hasMarker)
    }

    /// A file brought back from retry/ under a numbered name (a new file had taken its own),
    /// delivered, and its move into sent/ cut after its links: its hook waits for the claim that
    /// finishes the move, which files it (noJournal seed 10012140 of the simulator: the record still
    /// named the old outbox name, so the hook's run took the move for finished and rewrote the
    /// record in sent/; the claim could no longer link the outbox record there, and the file stayed
    /// in the outbox and in sent/).
    @Test(arguments: [SimDisk.Model.journalled, .noJournal])
    func aHookWaitsForTheMoveOfAFileBroughtBackUnderANumberedName(_ model: SimDisk.Model) throws {
        let back = try SimDiskMoveBackTests.Scenario(model, nameTaken: true)
        try back.moveBack()
        let (disk, spool) = (back.disk, back.spool)
        let path = RelativePath("a.2.bin")
        guard case .ready(let file) = back.claimer.claim(path, now: SimDiskTesting.start) else {
            Issue.record("a.2.bin is not claimed")
            return
        }
        try back.lifecycle.beginAttempt(file, now: SimDiskTesting.start)
        var record = file.manifest
        record.state = .sent
        record.closeOpenAttempt(at: SimDiskTesting.start, interrupted: false)
        record.markHookDue()
        record.storedAs = spool.storedAs(path, in: .sent)
        try spool.writeManifest(record, for: path, in: .outbox, syncDirectory: true)
        try HookLedger(spool: spool).ensureMarker(for: record, at: path, in: .sent)
        try disk.link("/spool/outbox/a.2.bin", "/spool/sent/a.2.bin")
        try disk.link("/spool/outbox/a.2.bin.manifest.json", "/spool/sent/a.2.bin.manifest.json")
        try disk.syncAll()
        disk.killProcess()

        let host = InlineHooks()
        func runDueHooks() throws {
            for marker in HookLedger(spool: spool).dueMarkers(problem: { _ in }) {
                DueHookRun(profile: try Self.profile(), spool: spool, hooks: HookRunner(clock: FixedClock(), host: host),
                           environment: [:], logger: Logger(level: .error, sink: { _ in })).run(marker)
            }
        }
        try runDueHooks()
        #expect(host.launched == 0, "the hook ran while the move that filed its file was unfinished")
        let claim = back.claimer.claim(path, now: SimDiskTesting.start)
        #expect({ if case .finishedByRecovery = claim { true } else { false } }(), "\(claim)")
        #expect(back.payloadPlaces == ["/spool/sent/a.2.bin"])
        #expect(disk.exists(path: "/spool/sent/a.2.bin.manifest.json") && !disk.exists(path: "/spool/outbox/a.2.bin.manifest.json"))
        try runDueHooks()
        #expect(host.launched == 1)
    }
}
