import UploaderValues

/// A move of a file and its record from the outbox into sent/ or retry/, as a plan receives it:
/// what the mover knows before the first step (the names, and which file it holds open).
package struct PlannedMove: Equatable, Sendable {
    /// The file's outbox name; its record is beside it.
    package var path: RelativePath
    /// sent/ or retry/.
    package var area: SpoolArea
    /// The file's name there (the record's `stored_as`).
    package var target: RelativePath
    /// A live move (not recovery's): a file its producer took away meanwhile is filed nowhere.
    package var live: Bool
    /// The final record was just renamed into the outbox: that is made durable before anything moves.
    package var recordFirst: Bool
    /// The file the mover holds open (its claim's), when it holds one: an outbox name that leads
    /// to another file (the producer's new one) is no name of this file.
    package var heldFile: FileIdentity?
    /// The final record (what the outbox record says).
    package var manifest: Manifest

    /// The record names a hook still to run: its marker is written before the record moves.
    package var hookDue: Bool { manifest.dueHook != nil }
    /// A delivery into sent/: the record's first name there adds a line to the sent ledger.
    package var delivery: Bool { area == .sent && manifest.state == .sent }

    package init(path: RelativePath, manifest: Manifest, area: SpoolArea, target: RelativePath, live: Bool, recordFirst: Bool,
                 heldFile: FileIdentity? = nil) {
        precondition(area != .outbox, "a move leaves the outbox")
        self.path = path
        self.area = area
        self.target = target
        self.live = live
        self.recordFirst = recordFirst
        self.heldFile = heldFile
        self.manifest = manifest
    }

    var outboxFile: SpoolPlace { SpoolPlace(.outbox, path) }
    var targetFile: SpoolPlace { SpoolPlace(area, target) }
}

/// Why a planned move stopped before its end.
package enum MoveFailure: Equatable, Sendable {
    /// The free name chosen for the file in sent/ or retry/ holds another file now: the mover
    /// records the next free name and plans again.
    case targetTaken(RelativePath)
    /// The file left the outbox after its upload (and, for recovery, has no new name either):
    /// nothing is filed.
    case removedFromOutbox
    /// The disk refused a step; the interpreter holds the error and reports it.
    case refused
}

/// How a planned move ended its part of the batch.
package enum MoveResult: Equatable, Sendable {
    /// The file (when `fileHere`) and its record have their new names, durable, and the file's
    /// outbox name is gone, durably; the record's outbox name is left for the end of the move.
    /// `fileHere` is false when recovery finishes a move whose file had its new name already.
    case moved(fileHere: Bool)
    case failed(MoveFailure)
}
