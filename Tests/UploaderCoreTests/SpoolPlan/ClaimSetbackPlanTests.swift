import Testing
import UploaderDecisions
import UploaderValues

/// What a claim does after each setback it can meet (`ClaimSetback.next`), in its first round
/// and in its last: which setbacks begin the claim again, which refuse the file (and with what
/// words), which file it as unreadable, and that no change makes a claim loop for ever.
@Suite struct ClaimSetbackPlanTests {
    static let last = ClaimSetback.rounds

    /// (setback, what the first round does, what the last round does).
    static let table: [(ClaimSetback, ClaimRecourse, ClaimRecourse)] = [
        (.nameTooLongForSidecar,
         .refuse("name too long: its sidecar manifest would exceed 255 bytes"),
         .refuse("name too long: its sidecar manifest would exceed 255 bytes")),
        (.nameLeadsNowhere, .settleVanished, .settleVanished),
        (.notRegular(.symlink), .refuseSettlingRecord("symlink, never followed"), .refuseSettlingRecord("symlink, never followed")),
        (.notRegular(.directory), .refuseSettlingRecord("directory (recursive = no)"),
         .refuseSettlingRecord("directory (recursive = no)")),
        (.notRegular(.other("FIFO")), .refuseSettlingRecord("FIFO, not a regular file"), .refuseSettlingRecord("FIFO, not a regular file")),
        (.directoryNotWritable(parent: "cam1"),
         .refuse("its directory cam1/ is not writable by this user: make it group-writable (chmod g+w; producers with umask 002 make it so)"),
         .refuse("its directory cam1/ is not writable by this user: make it group-writable (chmod g+w; producers with umask 002 make it so)")),
        (.symlinkAtOpen, .refuse("symlink, never followed (swapped in after detection)"),
         .refuse("symlink, never followed (swapped in after detection)")),
        (.deviceAtOpen, .refuse("socket or device, not a regular file"), .refuse("socket or device, not a regular file")),
        (.openDenied, .fileAsUnreadable, .fileAsUnreadable),
        (.lookFailed(reason: "Input/output error", lasting: false), .refuseForNow("Input/output error"), .refuseForNow("Input/output error")),
        (.lookFailed(reason: "Too many levels of symbolic links", lasting: true),
         .refuse("Too many levels of symbolic links"), .refuse("Too many levels of symbolic links")),
        (.changedWhileCopied, .claimAgain(round: 1), .refuseForNow("another user's file that keeps changing while it is copied")),
        (.copyFailed(reason: "No space left on device"),
         .refuseForNow("another user's file, which we may not link, cannot be copied to make it ours: No space left on device"),
         .refuseForNow("another user's file, which we may not link, cannot be copied to make it ours: No space left on device")),
        // A file that keeps changing under its hash is taken as it is in the end: the upload's
        // own check sees the change, and the file is sent again.
        (.changedWhileHashed, .claimAgain(round: 1), .goOnAsItIs),
        (.hashReadFailed(shrunk: true), .claimAgain(round: 1), .fileAsUnreadable),
        (.hashReadFailed(shrunk: false), .fileAsUnreadable, .fileAsUnreadable),
        // Never "changed": that would give what may be the version sent a new id.
        (.recheckReadFailed(reason: "Input/output error"),
         .refuseForNow("cannot read the file to check it against its record: Input/output error"),
         .refuseForNow("cannot read the file to check it against its record: Input/output error")),
        (.recordUnmovable(reason: "Read-only file system"),
         .refuseForNow("unreadable manifest that cannot be moved aside: Read-only file system"),
         .refuseForNow("unreadable manifest that cannot be moved aside: Read-only file system")),
        (.recordedMoveUnfinished(reason: "link a.bin: Input/output error"),
         .refuseForNow("cannot finish recorded move: link a.bin: Input/output error"),
         .refuseForNow("cannot finish recorded move: link a.bin: Input/output error")),
        (.moveBackUnfinished(reason: "rename a.bin: Input/output error"),
         .refuseForNow("cannot finish the move back from retry/: rename a.bin: Input/output error"),
         .refuseForNow("cannot finish the move back from retry/: rename a.bin: Input/output error")),
        (.changedDuringRecordedMove, .claimAgain(round: 0), .claimAgain(round: last)),
        (.settledForAfresh, .claimAgain(round: 0), .claimAgain(round: last)),
        (.recordChangedMeanwhile, .claimAgain(round: 1),
         .refuseForNow("cannot finish recorded move: its record keeps changing under the retry lock")),
        (.cameBackUnderName, .claimAgain(round: 1), .vanished),
    ]

    @Test func eachSetbackInTheFirstAndTheLastRound() {
        for (setback, first, last) in Self.table {
            #expect(setback.next(round: 0) == first, "\(setback) in the first round")
            #expect(setback.next(round: Self.last) == last, "\(setback) in the last round")
        }
    }

    /// A setback counted as a change begins the claim again one round later, every round until
    /// the last; the two that do not count lead to a record the claim never meets them with again.
    @Test func everyRoundButTheLastBeginsAgainOneLater() {
        let counted: [ClaimSetback] = [.changedWhileCopied, .changedWhileHashed, .hashReadFailed(shrunk: true),
                                       .recordChangedMeanwhile, .cameBackUnderName]
        for setback in counted {
            for round in 0..<Self.last {
                #expect(setback.next(round: round) == .claimAgain(round: round + 1), "\(setback) in round \(round)")
            }
            if case .claimAgain = setback.next(round: Self.last) {
                Issue.record("\(setback) begins again after the last round")
            }
        }
    }

    /// A move's chosen name found taken is chosen again, up to `namesTried` names in all.
    @Test func aTakenNameIsChosenAgainUpToTheLimit() {
        let chosen = (1...SpoolMoves.namesTried + 1).map { SpoolMoves.choosesAnotherName(afterTaken: $0) }
        #expect(chosen == Array(repeating: true, count: SpoolMoves.namesTried - 1) + [false, false])
    }
}
