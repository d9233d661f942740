import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderCore

/// The outbox's hidden temporary directory holds work under way — a record written aside before
/// its rename, another user's file being copied to make it ours — so only the start-up scan,
/// when nothing is under way, sweeps it; a running daemon's rescan leaves it alone.
@Suite struct RescanTemporariesTests {
    /// A prepared spool in `dir` and the recovery that scans it.
    static func spoolAndRecovery(in dir: TemporaryDirectory) throws -> (Spool, Recovery) {
        let spool = Spool(paths: SpoolPaths(root: dir.path + "/spool"))
        try spool.prepare()
        let logger = Logger(level: .error, sink: { _ in })
        let recovery = Recovery(spool: spool, lifecycle: FileLifecycle(spool: spool, logger: logger), ignore: IgnoreRules(patterns: []),
                                recursive: false, logger: logger, clock: ManualClock())
        return (spool, recovery)
    }

    @Test func aRescanLeavesWorkUnderWayAndTheStartUpSweepsLeftovers() throws {
        let dir = try TemporaryDirectory()
        let (spool, recovery) = try RescanTemporariesTests.spoolAndRecovery(in: dir)
        let aside = RelativePath(TemporaryNames.prefix + "7")
        try FileSystem.createFile(Array("a record written aside".utf8), named: aside, in: spool.paths.outboxTemporary, sync: false)

        _ = recovery.scanOutbox(atStartUp: false)
        #expect(FileSystem.exists(aside, in: spool.paths.outboxTemporary), "a rescan keeps it")
        _ = recovery.scanOutbox()
        #expect(!FileSystem.exists(aside, in: spool.paths.outboxTemporary), "the start-up removes it")
    }
}

/// A record in the outbox whose file has just gone to sent/ is a move under way when a worker
/// holds the file (its filer is between the file's step and the record's): a running daemon's
/// rescan leaves it to that worker, where the start-up, when nothing is under way, finishes it.
/// Settled beside the mover, a file written to meanwhile was brought back twice, under two
/// outbox names (journalled seed 12370, noJournal seed 12070 of the long run).
@Suite struct RescanHeldMoveTests {
    @Test func aRescanLeavesTheRecordOfAHeldFileToItsWorker() throws {
        let dir = try TemporaryDirectory()
        let (spool, recovery) = try RescanTemporariesTests.spoolAndRecovery(in: dir)
        let name = RelativePath("a.bin")
        // The move's first steps: the file and its `sent` record in sent/, the file's outbox name gone.
        try FileSystem.createFile(Array("delivered".utf8), named: name, in: spool.paths.sent, sync: true)
        var record = HookBookkeepingTests.manifest(.sent, path: name)
        let status = try FileSystem.status(name, in: spool.paths.sent)
        (record.size, record.mtime) = (status.size, status.mtimeText)
        record.storedAs = "sent/a.bin"
        try spool.writeManifest(record, for: name, in: .outbox)
        try FileSystem.link(Spool.manifestName(for: name), in: spool.paths.outbox, to: Spool.manifestName(for: name), in: spool.paths.sent)

        _ = recovery.scanOutbox(atStartUp: false, held: { $0 == name })
        #expect(FileSystem.exists(Spool.manifestName(for: name), in: spool.paths.outbox), "the held file's move is its worker's to end")
        _ = recovery.scanOutbox(atStartUp: false, held: { _ in false })
        #expect(!FileSystem.exists(Spool.manifestName(for: name), in: spool.paths.outbox), "unheld, the rescan ends the cut move")
        #expect(FileSystem.exists(name, in: spool.paths.sent))
    }
}
