import Foundation
import UploaderSupport
import UploaderDecisions

/// Live moves into sent/ filed as one batch by one caller: step 2 (the final record) is written by
/// each file's own job, steps 3–5 of all the moves waiting run together (`moveTogether`: one fsync
/// per directory and step for the whole batch). What lets one worker file what several would
/// otherwise wait for side by side in `Batcher`.
extension FileLifecycle {
    /// A live move into sent/ whose final record is in place in the outbox, not yet moved.
    package struct RecordedMove: Sendable {
        fileprivate var move: PendingMove
        fileprivate let original: Manifest
        /// The file's name in sent/ as the record says now.
        package var target: RelativePath { move.target }
    }

    /// Step 2 of `finish` for a move into sent/ (retry/ is not filed this way: that move runs under
    /// the retry-move lock): the final record, naming the file's free name in sent/, in place.
    /// `file`: the claimed file's identity, as for `finish`.
    package func recordFinal(_ path: RelativePath, manifest original: Manifest, inSentHolding file: FileSystem.Status?) throws -> RecordedMove {
        var move = try recordFinal(path, manifest: original, to: .sent, live: true)
        move.file = file
        return RecordedMove(move: move, original: original)
    }

    /// Steps 3–5 of recorded moves, all at once: what `finish` does after `recorded`, for each.
    /// `unchanged[i]` is asked as `finish` asks it; a name taken meanwhile is chosen again for that
    /// move alone. Answers, in order, the name each file now has in sent/ or what stopped it
    /// (`ChangedDuringMove` among them); one move failing stops only that one.
    package func fileTogether(_ moves: [RecordedMove], unchanged: [() throws -> String?]) -> [Result<RelativePath, any Error>] {
        precondition(moves.count == unchanged.count, "one change check per move")
        let moved = moveTogether(moves.map(\.move))
        return moves.indices.map { index in
            let recorded = moves[index]
            return Result {
                switch moved[index] {
                case .success(let fileHere):
                    try endMove(recorded.move, fileHere: fileHere, unchanged: unchanged[index])
                    return recorded.move.target
                case .failure(let taken as TargetTaken) where SpoolMoves.choosesAnotherName(afterTaken: 1):
                    logger.debug("the name chosen in sent/ was taken meanwhile; the next free one is used",
                                 ["file": recorded.move.path.logSafe, "taken": taken.target.logSafe])
                    var again = try recordFinal(recorded.move.path, manifest: recorded.original, to: .sent, live: true)
                    again.file = recorded.move.file
                    return try keepFiling(again, original: recorded.original, unchanged: unchanged[index], namesTaken: 1)
                case .failure(let error):
                    throw error
                }
            }
        }
    }
}
