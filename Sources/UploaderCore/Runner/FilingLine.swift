import Foundation
import Synchronization
import UploaderSupport
import UploaderSpool

/// Files delivered unchanged whose final record is in place, waiting to be moved into sent/: one
/// worker (the filer) takes every one waiting and files them as one batch
/// (`FileLifecycle.fileTogether`), so the upload jobs go on to their next file at once and no
/// thread waits in a move for the others'. At most one filer job is out at a time.
final class FilingLine: Sendable {
    /// A file to move: its record as written, the held file (its claim, for the change check).
    struct Filing: Sendable {
        let path: RelativePath
        let file: HeldFile
        let manifest: Manifest
        let recorded: FileLifecycle.RecordedMove
    }

    private struct Line: Sendable {
        var waiting: [Filing] = []
        /// A filer job is posted or runs: it takes what is added meanwhile.
        var filerOut = false
    }

    private let line = Mutex(Line())

    /// Adds `filing`; true when no filer is out, and the caller must post one.
    func add(_ filing: Filing) -> Bool {
        line.withLock { line in
            line.waiting.append(filing)
            defer { line.filerOut = true }
            return !line.filerOut
        }
    }

    /// For the filer: everything waiting; empty once there is nothing left, and then the filer is
    /// no longer out (the next `add` posts another).
    func take() -> [Filing] {
        line.withLock { line in
            defer { line.waiting = [] }
            if line.waiting.isEmpty { line.filerOut = false }
            return line.waiting
        }
    }
}
