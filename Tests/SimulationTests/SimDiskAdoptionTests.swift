import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderCore
import UploaderConfig
import UploaderSpool

/// A producer's file that the daemon may not link (another user's, `fs.protected_hardlinks = 1`)
/// is copied and swapped in under its name by its claim (`FileAdoption`). Killed at every one of
/// that claim's operations, then cut by a power cut, then started again: the content is always
/// under its outbox name, nowhere else but the temporary directory the start-up sweeps, and the
/// next claim makes it ours so that its move to sent/ (links) goes through.
@Suite struct SimDiskAdoptionTests {
    static let payload = SimDiskTesting.bytes("another user's bytes")
    static let path = RelativePath("theirs.txt")

    struct Scenario {
        let disk: SimDisk
        let spool: Spool
        let lifecycle: FileLifecycle
        let claimer: Claimer

        init(_ model: SimDisk.Model) throws {
            disk = SimDiskTesting.disk(model)
            (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
            disk.createFile(SimDiskAdoptionTests.path.displayed(in: spool.paths.outbox), data: SimDiskAdoptionTests.payload,
                            sync: true, foreign: true)
            try disk.syncAll()
        }

        func claim() -> Claimer.Outcome { claimer.claim(SimDiskAdoptionTests.path, now: SimDiskTesting.start) }

        /// Regular files holding the payload, but for the hidden name an adoption uses.
        var payloadPlaces: [String] {
            SimDiskTesting.files(on: disk, below: "/spool").filter { $0.value == SimDiskAdoptionTests.payload }.keys
                .filter { !$0.contains("/.upl-adopt.") }.sorted()
        }
    }

    @Test(arguments: SimDisk.Model.allCases)
    func aClaimThatAdoptsKilledAnywhereAndCutByAPowerCutLosesNothing(model: SimDisk.Model) throws {
        let full = try Scenario(model)
        let before = full.disk.operations
        guard case .ready = full.claim() else { Issue.record("the claim of a foreign file is ready"); return }
        let length = full.disk.operations - before
        #expect(length >= 5, "copy (create, write, times, fsync), exchange, outbox fsync")

        for k in 0...length {
            for seed in 0..<UInt64(8) {
                let scenario = try Scenario(model)
                scenario.disk.crash(atOperation: scenario.disk.operations + k)
                _ = scenario.claim()
                scenario.disk.killProcess()
                var rng = SplitMix64(seed: seed)
                scenario.disk.powerCut(&rng)
                let cut = "killed at operation \(k), power cut seed \(seed)"
                #expect(scenario.payloadPlaces == ["/spool/outbox/theirs.txt"], "\(cut)")

                _ = SimDiskTesting.recovery(scenario.spool, scenario.lifecycle).scanOutbox()
                guard case .ready(let file) = scenario.claim() else { Issue.record("claimed after \(cut)"); continue }
                try scenario.lifecycle.beginAttempt(file, now: SimDiskTesting.start)
                var sent = file.manifest
                sent.state = .sent
                sent.closeOpenAttempt(at: SimDiskTesting.start, interrupted: false)
                try scenario.lifecycle.finish(SimDiskAdoptionTests.path, manifest: sent, to: .sent)
                // The producer's original, kept beside the copy until now, goes (as the executor has it).
                try file.adoptedOriginal?.remove(file.fs)
                #expect(scenario.payloadPlaces == ["/spool/sent/theirs.txt"], "filed after \(cut)")
                #expect(!scenario.disk.names(in: "/spool/outbox").contains { $0.hasPrefix(".upl-adopt.") }, "settled after \(cut)")
            }
        }
    }

    /// A producer wrote to its original between the copy and the swap, and the daemon died before
    /// it could swap back: the start-up gives the original, with the newest bytes, its name again.
    @Test(arguments: SimDisk.Model.allCases)
    func theStartUpGivesAnOriginalWrittenAfterItsCopyItsNameBack(model: SimDisk.Model) throws {
        let disk = SimDiskTesting.disk(model)
        let (spool, lifecycle, claimer) = try SimDiskTesting.spool(on: disk)
        let newer = SimDiskTesting.bytes("written after the copy")
        disk.createFile("/spool/outbox/theirs.txt", data: Self.payload, sync: true)  // our copy, swapped in
        disk.createFile("/spool/outbox/.upl-adopt.theirs.txt", data: newer, sync: true, foreign: true)
        try disk.syncAll()
        let files = SimDiskTesting.recovery(spool, lifecycle).scanOutbox().files
        #expect(files == [Self.path])
        #expect(disk.contents("/spool/outbox/theirs.txt") == newer)
        #expect(!disk.exists(path: "/spool/outbox/.upl-adopt.theirs.txt"))
        guard case .ready(let file) = claimer.claim(Self.path, now: SimDiskTesting.start) else { Issue.record("claimed"); return }
        #expect(file.manifest.size == Int64(newer.count), "the newest bytes are claimed, copied afresh")
    }

    /// Our copy cut before its swap (the original still has the name), or the original whose bytes
    /// the copy already holds (cut after the swap): removed, the name left as it is. The disk's
    /// clock stands still, so both files have one mtime.
    @Test(arguments: [true, false])
    func theStartUpRemovesALeftoverThatHoldsNothingNew(leftoverIsTheOriginal: Bool) throws {
        let disk = SimDiskTesting.disk(.noJournal)
        let (spool, lifecycle, _) = try SimDiskTesting.spool(on: disk)
        disk.createFile("/spool/outbox/theirs.txt", data: Self.payload, sync: true, foreign: !leftoverIsTheOriginal)
        disk.createFile("/spool/outbox/.upl-adopt.theirs.txt", data: Self.payload, sync: true, foreign: leftoverIsTheOriginal)
        try disk.syncAll()
        let named = disk.inode("/spool/outbox/theirs.txt")
        _ = SimDiskTesting.recovery(spool, lifecycle).scanOutbox()
        #expect(disk.inode("/spool/outbox/theirs.txt") == named)
        #expect(disk.contents("/spool/outbox/theirs.txt") == Self.payload)
        #expect(!disk.exists(path: "/spool/outbox/.upl-adopt.theirs.txt"))
    }

    /// The producer's rewrite kept size and mtime (one tick of the file clock): only the bytes
    /// tell the original from the copy, and the start-up compares them.
    @Test func theStartUpTellsASameSizeRewriteInTheSameTickByItsBytes() throws {
        let disk = SimDiskTesting.disk(.noJournal)
        let (spool, lifecycle, _) = try SimDiskTesting.spool(on: disk)
        let rewritten = SimDiskTesting.bytes("another user's BYTES")
        #expect(rewritten.count == Self.payload.count)
        disk.createFile("/spool/outbox/theirs.txt", data: Self.payload, sync: true)  // our copy, swapped in
        disk.createFile("/spool/outbox/.upl-adopt.theirs.txt", data: rewritten, sync: true, foreign: true)
        try disk.syncAll()
        _ = SimDiskTesting.recovery(spool, lifecycle).scanOutbox()
        #expect(disk.contents("/spool/outbox/theirs.txt") == rewritten)
        #expect(!disk.exists(path: "/spool/outbox/.upl-adopt.theirs.txt"))
    }

    @Test func theDaemonsOwnFilesAreNeverCopied() throws {
        let scenario = try Scenario(.journalled)
        let own = RelativePath("ours.txt")
        scenario.disk.createFile(own.displayed(in: scenario.spool.paths.outbox), data: Self.payload, sync: true)
        let inode = scenario.disk.inode("/spool/outbox/ours.txt")
        guard case .ready(let file) = scenario.claimer.claim(own, now: SimDiskTesting.start) else {
            Issue.record("claimed"); return
        }
        #expect(file.status.inode == inode, "claimed as it is")
    }

    /// Our copy filed away (its move cut after the copy left the outbox), the producer puts a FIFO
    /// under the name, and the daemon starts again: the original, the copy's bytes, goes; it does
    /// not take the name back as if it were newer than a copy there (noJournal seed 1293: it did,
    /// was filed beside the copy under the same record, and both went up at once under one key).
    @Test(arguments: SimDisk.Model.allCases)
    func anOriginalWhoseCopyWasFiledIsRemovedWhenAFIFOHasTheName(model: SimDisk.Model) throws {
        let scenario = try Scenario(model)
        guard case .ready(let claimed) = scenario.claim() else { Issue.record("the claim of a foreign file is ready"); return }
        scenario.spool.fs.close(claimed.fd)
        let outbox = scenario.spool.paths.outbox
        let leftover = RelativePath(".upl-adopt." + Self.path.display)
        #expect(scenario.disk.exists(path: leftover.displayed(in: outbox)), "the original is kept beside the copy")
        // The copy filed away: its outbox name gone; then the producer's FIFO under it.
        try scenario.disk.makeDirectories("/spool/retry")
        try scenario.disk.rename(Self.path.displayed(in: outbox), "/spool/retry/theirs.txt")
        #expect(scenario.disk.makeFIFO(Self.path.displayed(in: outbox)))

        try FileAdoption(lifecycle: scenario.lifecycle).reconcileLeftover(leftover)
        #expect(!scenario.disk.exists(path: leftover.displayed(in: outbox)))
        #expect(scenario.disk.inspect(Self.path.displayed(in: outbox))?.kind == .other, "the producer's FIFO stays")
        #expect(scenario.payloadPlaces == ["/spool/retry/theirs.txt"])
    }
}
