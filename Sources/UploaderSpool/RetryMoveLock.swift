import Foundation
import UploaderSupport
import UploaderConfig

/// Keeps moves into and out of retry/ by the daemon apart from those of `uploader retry`, a
/// process of its own on the same spool: each takes a lock on `<spool>/.retry.lock` for the
/// whole of one move (`FileLifecycle` steps 2–5 into retry/, 6–8 out of it). The daemon's moves
/// take it shared, so its own jobs never wait for each other; `uploader retry` takes it
/// exclusive around each file it moves back, so it never runs between the steps of a daemon's
/// move (which could lose the file, or bring it back twice), nor the daemon between its steps.
package struct RetryMoveLock: Sendable {
    /// The lock file, in the spool's root beside `.lock`.
    package static let name = RelativePath(".retry.lock")

    /// Shared: the daemon's moves. Exclusive: `uploader retry`'s.
    package enum Mode: Sendable { case shared, exclusive }

    let spool: Spool

    package init(spool: Spool) { self.spool = spool }

    /// The lock file's path, as errors name it.
    package var path: String { Self.name.displayed(in: spool.paths.root) }

    /// Runs `body` holding the lock in `mode`; throws when the lock file cannot be opened or locked
    /// (nothing has moved then).
    package func around<T>(_ mode: Mode, _ body: () throws -> T) throws -> T {
        try spool.fs.withLock(Self.name, in: spool.paths.root, exclusive: mode == .exclusive, body)
    }

    /// `around`, or `body` alone when `needed` is false (a move that does not touch retry/).
    package func around<T>(_ mode: Mode, when needed: Bool, _ body: () throws -> T) throws -> T {
        needed ? try around(mode, body) : try body()
    }
}

extension FileLifecycle {
    /// `moveBack` holding the retry-move lock in `mode` (`RetryMoveLock`).
    @discardableResult
    package func moveBack(fromRetry path: RelativePath, resetBackoff: Bool, locked mode: RetryMoveLock.Mode) throws -> RelativePath {
        try RetryMoveLock(spool: spool).around(mode) { try moveBack(fromRetry: path, resetBackoff: resetBackoff) }
    }
}
