import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig
import UploaderSpool

/// `uploader retry --all` run by the operator while the daemon runs: a process of its own on the
/// spool, on a thread of its own under the baton, so its moves back interleave with the daemon's
/// jobs, hooks and start-up at every disk call. Each file moves back as `RetryCommand` moves it,
/// by production's `moveBack(fromRetry:resetBackoff:)` holding the retry-move lock exclusive,
/// which waits for the daemon's moves into and out of retry/ (shared) and they for it. A kill -9
/// of the daemon leaves it running; a power cut ends it (`view.end()`).
final class SimRetryCommand: @unchecked Sendable {
    // Used by the thread holding the baton only.
    let view: ProcessView
    private(set) var finished = false
    /// A file it could not move back while it ran (production prints why and exits 1): the
    /// operator runs it again.
    private(set) var failed = false
    /// Files moved back since the world last looked: it posts them as the daemon's watcher would.
    private var moved: [RelativePath] = []
    private let tookBack: (_ failed: Manifest, _ name: String, _ record: [UInt8]?) -> Void
    private let movesBack: (_ record: Manifest?) -> Void

    /// `movesBack`: the world's bookkeeping for a record about to be moved back, read under the
    /// lock (nil when it cannot be read: any); its due time is reset, the file is sent at once.
    /// `tookBack`: for a failed file moved back (its `on_failed` is due again), given the record
    /// as it was just before, under the lock.
    init(disk: SimDisk, baton: BatonScheduler, locks: SimFileLocks, paths: SpoolPaths, logger: Logger, seed: UInt64,
         movesBack: @escaping (_ record: Manifest?) -> Void,
         tookBack: @escaping (_ failed: Manifest, _ name: String, _ record: [UInt8]?) -> Void) {
        self.tookBack = tookBack
        self.movesBack = movesBack
        view = ProcessView(disk: disk, scheduler: SimJobQueue(baton: baton))
        view.locks = locks
        let spool = Spool(paths: paths, fs: view, temporaries: TemporaryNames(start: seed), scheduler: baton)
        let lifecycle = FileLifecycle(spool: spool, logger: logger, scheduler: baton)
        let view = self.view
        baton.startThread(named: "uploader retry") { [self] in
            // Its listing of retry/ (production walks the directory outside the seam).
            let names = view.dead ? [] : SpoolView(disk: disk, paths: paths).manifests.filter { $0.area == .retry }.map(\.name)
            for name in names where !view.dead {
                let file = Spool.fileName(forManifest: RelativePath(name))
                let back = try? RetryMoveLock(spool: spool).around(.exclusive) { () -> RelativePath? in
                    let record = view.dead ? nil : disk.contents(paths.retry + "/" + name)
                    let manifest = record.flatMap { try? Manifest.decode(Data($0)) }
                    if !view.dead { self.movesBack(manifest) }
                    let back = try? lifecycle.moveBack(fromRetry: file, resetBackoff: true)
                    if back == nil && !view.dead { self.failed = true }
                    // Also when a power cut ended it: the record it rewrote may be durable (the
                    // world judges from what the disk keeps, and forgets a take-back the cut undid).
                    if let failed = manifest, failed.state == .failed {
                        self.tookBack(failed, name, record)
                    }
                    return back
                }
                if let back = back ?? nil { moved.append(back) }
            }
            finished = true
        }
    }

    /// The files moved back since the last call.
    func takeMoved() -> [RelativePath] {
        defer { moved = [] }
        return moved
    }
}
