/// What stopped a claim from going straight on to a claimed file, as the claimer saw it: a name
/// that leads nowhere, an entry that is no regular file, a system call that failed, a file that
/// changed under its hash or copy. `next(round:)` decides, from that alone and from how many
/// times the claim already began again, whether it begins again, settles a record, refuses the
/// file for now or until it changes (with the words of its one warning line), or files it as
/// unreadable. The claimer only
/// observes and performs.
package enum ClaimSetback: Equatable, Sendable {
    /// The sidecar manifest's name (`.NAME.uploader.json`) would exceed 255 bytes.
    case nameTooLongForSidecar
    /// lstat or open found no entry under the name, or a component that is no directory.
    case nameLeadsNowhere
    /// lstat or fstat found something other than a regular file.
    case notRegular(EntryKind)
    /// The producer's subdirectory holding the file is not writable by the daemon.
    case directoryNotWritable(parent: String)
    /// open(O_NOFOLLOW) met a symlink swapped in after the lstat.
    case symlinkAtOpen
    /// open met a socket or device with nothing behind it, swapped in after the lstat.
    case deviceAtOpen
    /// open was refused (permissions) or the device failed: the file exists but cannot be read.
    case openDenied
    /// lstat, open or fstat failed otherwise; `reason` is the system's words. `lasting`: an error
    /// that holds until the path changes (a symlink on the way, a directory not searchable), not
    /// one of the disk's moments.
    case lookFailed(reason: String, lasting: Bool)
    /// Another user's file (which the daemon may not link) changed while it was copied.
    case changedWhileCopied
    /// Another user's file could not be copied to make it the daemon's.
    case copyFailed(reason: String)
    /// The file's size or mtime moved between its fstat and the end of its hash.
    case changedWhileHashed
    /// Reading the file for its hash failed; `shrunk` when its fstat, asked afterwards, shows it
    /// shorter than at the claim (its producer cut it short: a change, not a broken file).
    case hashReadFailed(shrunk: Bool)
    /// The record is `queued` or `uploading` but cannot be told from the file's bytes: the
    /// re-read that would check it against its digest failed.
    case recheckReadFailed(reason: String)
    /// The record cannot be parsed, and moving it aside failed.
    case recordUnmovable(reason: String)
    /// The recorded move could not be finished; `reason` is the failed step's words.
    case recordedMoveUnfinished(reason: String)
    /// A move back from retry/ cut short could not be finished.
    case moveBackUnfinished(reason: String)
    /// Finishing a recorded delivery found the file changed: it is back in the outbox beside its
    /// record, which now says it changed after delivery.
    case changedDuringRecordedMove
    /// The record changed while the claim waited for the retry-move lock (`uploader retry` moved
    /// the file back meanwhile).
    case recordChangedMeanwhile
    /// No file under the name, and its record's move brought the file back to the outbox.
    case cameBackUnderName
    /// No file under the name; settling its record left a file to claim afresh.
    case settledForAfresh

    /// What a non-regular entry is, for the words of its refusal.
    package enum EntryKind: Equatable, Sendable {
        case symlink, directory
        /// Anything else, named as `stat` would ("FIFO", "socket", "character device").
        case other(String)

        /// Its name in a log line or a record's reason.
        package var name: String {
            switch self {
            case .symlink: "symlink"
            case .directory: "directory"
            case .other(let name): name
            }
        }
    }

    /// How many times a claim begins again on a change it met before it takes the file as it is
    /// (or refuses it when even a copy cannot be made).
    package static let rounds = 3

    /// What the claim does next, in round `round` (0 for its first look).
    package func next(round: Int) -> ClaimRecourse {
        precondition(round >= 0 && round <= Self.rounds, "a claim begins again at most \(Self.rounds) times")
        let again: ClaimRecourse? = round < Self.rounds ? .claimAgain(round: round + 1) : nil
        switch self {
        case .nameTooLongForSidecar:
            return .refuse("name too long: its sidecar manifest would exceed 255 bytes")
        case .nameLeadsNowhere:
            // Its record may still name a move to finish.
            return .settleVanished
        case .notRegular(let kind):
            // A record beside it belongs to a file that was swapped out: settled, never deleted.
            switch kind {
            case .symlink: return .refuseSettlingRecord("symlink, never followed")
            case .directory: return .refuseSettlingRecord("directory (recursive = no)")
            case .other(let name): return .refuseSettlingRecord("\(name), not a regular file")
            }
        case .directoryNotWritable(let parent):
            // The file could be sent but never moved out of its directory: said before any upload.
            return .refuse("its directory \(parent)/ is not writable by this user: make it group-writable "
                           + "(chmod g+w; producers with umask 002 make it so)")
        case .symlinkAtOpen:
            return .refuse("symlink, never followed (swapped in after detection)")
        case .deviceAtOpen:
            return .refuse("socket or device, not a regular file")
        case .openDenied:
            return .fileAsUnreadable
        case .lookFailed(let reason, let lasting):
            return lasting ? .refuse(reason) : .refuseForNow(reason)
        case .changedWhileCopied:
            return again ?? .refuseForNow("another user's file that keeps changing while it is copied")
        case .copyFailed(let reason):
            return .refuseForNow("another user's file, which we may not link, cannot be copied to make it ours: \(reason)")
        case .changedWhileHashed:
            return again ?? .goOnAsItIs
        case .hashReadFailed(let shrunk):
            return shrunk ? (again ?? .fileAsUnreadable) : .fileAsUnreadable
        case .recheckReadFailed(let reason):
            // A failed read says nothing of the bytes: claimed afresh, the file would take a new
            // id for what may be the very version the record sent.
            return .refuseForNow("cannot read the file to check it against its record: \(reason)")
        case .recordUnmovable(let reason):
            return .refuseForNow("unreadable manifest that cannot be moved aside: \(reason)")
        case .recordedMoveUnfinished(let reason):
            return .refuseForNow("cannot finish recorded move: \(reason)")
        case .moveBackUnfinished(let reason):
            return .refuseForNow("cannot finish the move back from retry/: \(reason)")
        case .changedDuringRecordedMove, .settledForAfresh:
            // Not counted: the record the next round reads is one this branch never returns to
            // (a changed delivery, or none), so the claim cannot come back here.
            return .claimAgain(round: round)
        case .recordChangedMeanwhile:
            return again ?? .refuseForNow("cannot finish recorded move: its record keeps changing under the retry lock")
        case .cameBackUnderName:
            return again ?? .vanished
        }
    }
}

/// What a claim does after a `ClaimSetback`.
package enum ClaimRecourse: Equatable, Sendable {
    /// Looks at the name again from the start, as round `round`.
    case claimAgain(round: Int)
    /// Settles the record of a name with no file (`SpoolMoves.settleVanished`), which says how
    /// the claim ends.
    case settleVanished
    /// Not uploaded, for this reason, which holds until the entry changes (what it is, its name,
    /// its directory's mode): looked at again only when it is seen again.
    case refuse(String)
    /// Not uploaded yet, for this reason: a step the disk refused, or a file that would not hold
    /// still. It stays queued, and the claim is tried again a few seconds later.
    case refuseForNow(String)
    /// Not uploaded, for this reason; a record beside the entry is settled first
    /// (`SpoolMoves.settleRecordBesideEntry`).
    case refuseSettlingRecord(String)
    /// The file exists and cannot be read: it goes to retry/ as failed, the system's words in
    /// its record.
    case fileAsUnreadable
    /// Nothing to claim under the name.
    case vanished
    /// Claimed as it is, with what was read: the upload's own check sees the change.
    case goOnAsItIs
}
