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
    @Test func aRescanLeavesWorkUnderWayAndTheStartUpSweepsLeftovers() throws {
        let dir = try TemporaryDirectory()
        let spool = Spool(paths: SpoolPaths(root: dir.path + "/spool"))
        try spool.prepare()
        let logger = Logger(level: .error, sink: { _ in })
        let recovery = Recovery(spool: spool, lifecycle: FileLifecycle(spool: spool, logger: logger), ignore: IgnoreRules(patterns: []),
                                recursive: false, logger: logger, clock: ManualClock())
        let aside = RelativePath(TemporaryNames.prefix + "7")
        try FileSystem.createFile(Array("a record written aside".utf8), named: aside, in: spool.paths.outboxTemporary, sync: false)

        _ = recovery.scanOutbox(atStartUp: false)
        #expect(FileSystem.exists(aside, in: spool.paths.outboxTemporary), "a rescan keeps it")
        _ = recovery.scanOutbox()
        #expect(!FileSystem.exists(aside, in: spool.paths.outboxTemporary), "the start-up removes it")
    }
}
