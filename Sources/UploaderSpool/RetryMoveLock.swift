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

    /// The lock file could not be opened or locked (a read-only spool, no permission): nothing moved.
    package struct Unavailable: Error, CustomStringConvertible {
        package var error: any Error
        package var description: String { "cannot take the retry-move lock: \(error)" }
    }

    /// Runs `body` holding the lock in `mode`; throws `Unavailable` when the lock file cannot be
    /// opened or locked (nothing has moved then), and whatever `body` throws.
    package func around<T>(_ mode: Mode, _ body: () throws -> T) throws -> T {
        var entered = false
        do {
            return try spool.fs.withLock(Self.name, in: spool.paths.root, exclusive: mode == .exclusive) {
                entered = true
                return try body()
            }
        } catch where !entered {
            throw Unavailable(error: error)
        }
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
