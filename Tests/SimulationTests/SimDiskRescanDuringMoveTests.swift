import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
@testable import UploaderSpool

/// A running daemon's rescan (after an inotify overflow, or a periodic one) that meets a move
/// into retry/ between its links and the removal of the record's outbox name: the rescan finishes
/// the move (the record is in place, its old name goes), and the move itself then ends as done,
/// filed in retry/ where the core can find it when it comes due. The simulator saw the move end in
/// an error on the name already gone, the core take the file for failed in the outbox, and the
/// file wait in retry/ unknown to it until the next start (journalled seed 20261421, `everyFileSettles`).
@Suite struct SimDiskRescanDuringMoveTests {
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aMoveIntoRetryThatARescanFinishedEndsAsFiled(_ model: SimDisk.Model) throws {
        let scenario = try SimDiskLifecycleTests.Scenario(model, ending: .retry)
        let (disk, spool, lifecycle, path, record) = (scenario.disk, scenario.spool, scenario.lifecycle, scenario.path, scenario.manifest)
        let payload = SimDiskLifecycleTests.payload
        var rescanned: [RelativePath]?
        let target = try lifecycle.finish(path, manifest: record, to: .retry, unchanged: {
            // The file is out of the producer's reach: the moment a live move asks whether it changed.
            rescanned = SimDiskTesting.recovery(spool, lifecycle).scanOutbox(atStartUp: false).files
            return nil
        })
        #expect(target == path)
        #expect(rescanned == [], "the rescan queues nothing: the file is in retry/")
        #expect(disk.names(in: "/spool/outbox").filter { !$0.hasPrefix(".") }.isEmpty)
        #expect(disk.names(in: "/spool/retry").sorted() == ["a.bin", "a.bin.manifest.json"])
        #expect(SimDiskTesting.files(on: disk, below: "/spool").filter { $0.value == payload }.keys.sorted() == ["/spool/retry/a.bin"])
    }

    /// The same rescan, and the file turns out written to during the move: it comes back to the
    /// outbox to be sent again, and its record goes from retry/ too (noJournal seed 3000282: the
    /// record stayed there, with no file).
    @Test(arguments: [SimDisk.Model.noJournal, .journalled])
    func aMoveIntoRetryThatARescanFinishedAndThatFindsTheFileChangedLeavesNothingInRetry(_ model: SimDisk.Model) throws {
        let scenario = try SimDiskLifecycleTests.Scenario(model, ending: .retry)
        let (disk, spool, lifecycle, path, record) = (scenario.disk, scenario.spool, scenario.lifecycle, scenario.path, scenario.manifest)
        let payload = SimDiskLifecycleTests.payload
        #expect(throws: FileLifecycle.ChangedDuringMove(change: "appended to")) {
            try lifecycle.finish(path, manifest: record, to: .retry, unchanged: {
                _ = SimDiskTesting.recovery(spool, lifecycle).scanOutbox(atStartUp: false)
                return "appended to"
            })
        }
        #expect(disk.names(in: "/spool/retry").isEmpty)
        #expect(SimDiskTesting.files(on: disk, below: "/spool").filter { $0.value == payload }.keys.sorted() == ["/spool/outbox/a.bin"])
    }
}
