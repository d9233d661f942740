import UploaderValues

/// What a claim made of the file it holds open, when the kernel may refuse to link it
/// (`SpoolMoves.adopt`).
package enum Adoption: Equatable, Sendable {
    /// Linkable as it is: nothing was done.
    case notNeeded
    /// The outbox name now holds our copy (`copy`); the producer's original, as it was copied
    /// (`original`), is kept under the hidden name until our copy is filed.
    case adopted(copy: FileIdentity, original: FileFacts)
    /// Our copy, made by an earlier claim, whose original is still beside it as it was copied.
    case copiedBefore(original: FileFacts)
    /// The file changed or was replaced meanwhile: claim it again.
    case changed
}

/// Making a producer's file the daemon's own before its claim, planned over `DiskSteps`: with
/// `fs.protected_hardlinks = 1` (every Debian's default) a user may link only files it owns or may
/// write, a producer's `0644` file in a shared outbox is neither, and every move of the spool is
/// a link. The file is copied beside itself under `.upl-adopt.NAME` (bytes, permission bits and
/// mtime; fsynced), and the copy and the original swap names in one `RENAME_EXCHANGE`. Safe at
/// every instant: before the swap the original alone has the outbox name; after it, either file
/// holds the same bytes durably under that name.
///
/// A producer still writing is seen: the held descriptor is checked before and after the swap,
/// and a change swaps the names back and the claim starts again. The original stays under the
/// hidden name until our copy is filed (a producer that holds it open writes on there); a crash
/// leaves it there, and `reconcileAdoption` settles it.
extension SpoolMoves {
    /// `held`: what the claim's fstat said of the file it holds open at `path`.
    /// `writtenJustBefore`: the file was last written within one tick of the file clock, so a
    /// rewrite of the same size could leave its size and mtime as they were; its bytes are then
    /// compared with the copy's once the copy has the name.
    package static func adopt<D: DiskSteps>(_ path: RelativePath, held: FileFacts, writtenJustBefore: Bool,
                                            on disk: inout D) throws(PlanStop) -> Adoption {
        let named = SpoolPlace(.outbox, path), aside = SpoolPlace(.outbox, SpoolPlace.adoptionLeftover(of: path))
        let ours = try disk.mayLink(named)
        if try disk.lookUp(aside) != nil {
            if ours, let original = try keptOriginal(aside, copy: held, on: &disk) { return .copiedBefore(original: original) }
            // What an earlier try left, or an original written to since: settled first (the
            // original may take its name back: then the claim starts again).
            try reconcileAdoption(path, on: &disk)
            if ours { return try disk.lookUp(named) == held.identity ? .notNeeded : .changed }
        } else if ours {
            return .notNeeded
        }
        try disk.run(.copyHeld(to: aside))
        guard let copy = try disk.lookUp(aside) else { throw .refused(.noEntry) }
        guard heldUnchanged(held, on: &disk), try disk.lookUp(named) == held.identity else {
            try disk.unlink(aside)
            return .changed
        }
        try disk.run(.exchange(aside, named))
        // What now has the hidden name is what the outbox name held just before the swap: the
        // original, unless the producer put another file there between the look and the swap.
        var kept = try disk.lookUp(aside) == held.identity && heldUnchanged(held, on: &disk)
        if kept && writtenJustBefore { kept = try disk.sameBytes(aside, named) }
        guard kept else {
            try disk.run(.exchange(aside, named))
            try disk.unlink(aside)
            return .changed
        }
        // The file's id derives from its inode (`ManifestID`): the swap durable before the claim goes on.
        try disk.syncDirectory(of: named)
        return .adopted(copy: copy, original: held)
    }

    /// What an adoption of the file at `path` left under its hidden name. Our own copy (cut before
    /// the swap, or swapped back) goes. The producer's original (kept after the swap, or cut there)
    /// goes too when the outbox name holds its bytes, is gone (filed, or removed by the producer) or
    /// holds what is not our copy; when our copy there holds other bytes — the producer wrote to the
    /// original after it was copied — the original takes its name back, to be claimed afresh.
    package static func reconcileAdoption<D: DiskSteps>(_ path: RelativePath, on disk: inout D) throws(PlanStop) {
        let named = SpoolPlace(.outbox, path), aside = SpoolPlace(.outbox, SpoolPlace.adoptionLeftover(of: path))
        guard let original = try disk.inspect(aside) else { throw .refused(.noEntry) }
        let theirs = try !disk.mayLink(aside)
        var newerThanOurCopy = false
        if theirs, let now = try disk.inspect(named), now.isRegular, now.identity != original.identity, try disk.mayLink(named) {
            newerThanOurCopy = try !now.sameVersion(as: original) ? true : !disk.sameBytes(aside, named)
        }
        if newerThanOurCopy {
            try disk.run(.renameOver(aside, to: named))
        } else {
            try disk.unlink(aside)
        }
        try disk.syncDirectory(of: named)
    }

    /// The producer's original under the hidden name, when it still holds what our copy (`copy`,
    /// now under the outbox name) was made of: kept on while the copy is claimed again.
    private static func keptOriginal<D: DiskSteps>(_ aside: SpoolPlace, copy: FileFacts, on disk: inout D) throws(PlanStop) -> FileFacts? {
        guard let original = try disk.inspect(aside), original.isRegular, try !disk.mayLink(aside),
              original.sameVersion(as: copy) else { return nil }
        return original
    }

    /// The held file's size and mtime are still those it was claimed with (an fstat that fails
    /// counts as a change: the claim that follows says why).
    private static func heldUnchanged<D: DiskSteps>(_ held: FileFacts, on disk: inout D) -> Bool {
        guard case .facts(let now?) = disk.perform(.inspectHeld) else { return false }
        return now.sameVersion(as: held)
    }
}
