import UploaderValues

/// A name in the spool a plan acts on: a file's, or its sidecar record's, in one of the three
/// areas. The planner names places; the spool turns them into directories and bytes.
package struct SpoolPlace: Hashable, Sendable, CustomStringConvertible {
    /// The file itself, or its manifest beside it (`NAME.manifest.json`).
    package enum Kind: Hashable, Sendable { case file, record }

    package var area: SpoolArea
    package var path: RelativePath
    package var kind: Kind

    package init(_ area: SpoolArea, _ path: RelativePath, _ kind: Kind = .file) {
        self.area = area
        self.path = path
        self.kind = kind
    }

    /// The record beside this place's file.
    package var record: SpoolPlace { SpoolPlace(area, path, .record) }

    /// The directory a directory fsync of this place makes durable: its area and parent.
    package var directory: SpoolDirectory { SpoolDirectory(area: area, parent: path.parent) }

    package var description: String { "\(area.rawValue)/\(path.logSafe)\(kind == .record ? " (record)" : "")" }
}

/// A directory of the spool, as a plan fsyncs it once for every move that needs it.
package struct SpoolDirectory: Hashable, Sendable {
    package var area: SpoolArea
    package var parent: RelativePath?
}

/// Which file a name leads to (device and inode): how a plan tells the file it moves from another
/// one a producer has put under the same name since.
package struct FileIdentity: Hashable, Sendable {
    package var device: UInt64
    package var inode: UInt64

    package init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}

/// One disk operation of a plan, for the moves (by index in the plan's batch) it serves. The
/// interpreter performs it and hands back a `StepOutcome`; it decides nothing itself.
package enum DiskStep: Equatable, Sendable {
    /// fsync of the directory holding `place`: the creations, renames and removals in it durable.
    case syncDirectory(SpoolPlace, moves: [Int])
    /// The subdirectories `place` needs (recursive spools), each fsynced in its parent.
    case makeParents(SpoolPlace, move: Int)
    /// lstat: which file `place` leads to (`found(nil)` when nothing has the name).
    case lookUp(SpoolPlace, move: Int)
    /// The hook marker of the move's record (`.hooks-due/`), durable, before its record moves.
    case markHookDue(Manifest, at: SpoolPlace, move: Int)
    /// link(2) of `from` as `to`, never following a symlink; refused with `exists` if `to` is taken.
    case link(SpoolPlace, to: SpoolPlace, move: Int)
    /// renameat2 with RENAME_NOREPLACE: for another user's file we may neither link nor read.
    case rename(SpoolPlace, to: SpoolPlace, move: Int)
    case unlink(SpoolPlace, move: Int)
    /// A line in the sent ledger for each of these deliveries (a statistic: never fails a move).
    case recordDeliveries([Manifest], moves: [Int])
    /// lstat with the facts a change is told by: `facts(nil)` when nothing has the name.
    case inspect(SpoolPlace)
    /// The record at `place` (its kind is `.record`), read and parsed: `record(_)`.
    case readRecord(SpoolPlace)
    /// `manifest` written whole under `place` (a record): temporary, write, fsync, rename over
    /// the old one; with `syncDirectory`, its directory fsynced after.
    case writeRecord(Manifest, at: SpoolPlace, syncDirectory: Bool)
    /// The record beside `place`'s file moved aside into `.quarantine/`, never deleted (linked
    /// there, fsynced, then unlinked): `name(_)` is where it went.
    case quarantineRecord(SpoolPlace)
    /// A line in the daemon's log: what a plan did or could not do, said where the operator looks.
    case note(PlanNote)
    /// fstat of the file the caller holds open (a claim's descriptor): `facts(_)`, whatever name
    /// it has now.
    case inspectHeld
    /// Whether the marker of `hook` for the file at `place` is in `.hooks-due/`: `found(_)`, nil
    /// when it is not (the hook has run, or was never due).
    case lookUpHookDue(SpoolPlace, hook: String)
    /// Whether the kernel lets us link the file at `place` (ours, or one we may write; with
    /// `fs.protected_hardlinks = 1` a producer's `0644` file is neither): `answer(_)`.
    case mayLink(SpoolPlace)
    /// The file the caller holds open copied whole to `place` (bytes, permission bits, mtime;
    /// fsynced), a name nothing has.
    case copyHeld(to: SpoolPlace)
    /// renameat2 with RENAME_EXCHANGE: the two names swap their files at once.
    case exchange(SpoolPlace, SpoolPlace)
    /// rename(2) of `from` over `to`, replacing what `to` holds.
    case renameOver(SpoolPlace, to: SpoolPlace)
    /// Whether the two files hold the same bytes: `answer(_)`.
    case sameBytes(SpoolPlace, SpoolPlace)

    /// The moves whose outcome this step decides.
    package var moves: [Int] {
        switch self {
        case .syncDirectory(_, let moves), .recordDeliveries(_, let moves): return moves
        case .inspect, .readRecord, .writeRecord, .quarantineRecord, .note, .inspectHeld, .lookUpHookDue,
             .mayLink, .copyHeld, .exchange, .renameOver, .sameBytes:
            return [0]
        case .makeParents(_, let move), .lookUp(_, let move), .markHookDue(_, _, let move), .link(_, _, let move),
             .rename(_, _, let move), .unlink(_, let move):
            return [move]
        }
    }
}

/// What performing a step came to, as the planner reads it.
package enum StepOutcome: Equatable, Sendable {
    case done
    /// A `lookUp`'s answer: the file the name leads to, or nil when nothing has it.
    case found(FileIdentity?)
    /// An `inspect`'s answer.
    case facts(FileFacts?)
    /// A `readRecord`'s answer.
    case record(RecordRead)
    /// A `quarantineRecord`'s answer: where the record went.
    case name(RelativePath)
    /// A question's answer (`mayLink`, `sameBytes`).
    case answer(Bool)
    case refused(DiskRefusal)
}

/// What an lstat says of a file that a plan decides with: which file it is, and the size and
/// modification time a record compares to tell a change.
package struct FileFacts: Equatable, Sendable {
    package var identity: FileIdentity
    package var size: Int64
    /// The modification time as a record keeps it (`Timestamp.format`).
    package var mtime: String
    /// The modification time to the nanosecond, as the kernel keeps it: what tells a rewrite that
    /// the millisecond of `mtime` cannot.
    package var mtimeNanos: Int64
    /// A regular file (not a directory, FIFO, socket or symlink).
    package var isRegular: Bool

    package init(identity: FileIdentity, size: Int64, mtime: String, mtimeNanos: Int64 = 0, isRegular: Bool = true) {
        self.identity = identity
        self.size = size
        self.mtime = mtime
        self.mtimeNanos = mtimeNanos
        self.isRegular = isRegular
    }

    /// Same size and nanosecond mtime: no write seen since `other` was taken.
    package func sameVersion(as other: FileFacts) -> Bool { size == other.size && mtimeNanos == other.mtimeNanos }

    /// Whether the file is still the version `record` was made of (same size and mtime).
    package func isVersion(of record: Manifest) -> Bool { size == record.size && mtime == record.mtime }
}

/// A record as a plan reads it.
package enum RecordRead: Equatable, Sendable {
    case parsed(Manifest)
    /// Nothing has the name.
    case missing
    /// Not a manifest (ours are renamed into place whole, so not ours).
    case corrupt
    /// It cannot be read (EIO, EACCES): never taken for absent.
    case unreadable

    /// The record, when it parsed.
    package var manifest: Manifest? {
        if case .parsed(let manifest) = self { return manifest }
        return nil
    }
}

/// Why the disk refused a step, in the few kinds a plan decides on; the error itself stays with
/// the interpreter, which reports it.
package enum DiskRefusal: Equatable, Sendable {
    /// EEXIST: the name is taken.
    case exists
    /// EPERM: the kernel refuses us a link of another user's file (`fs.protected_hardlinks`).
    case notPermitted
    /// ENOENT: nothing has the name.
    case noEntry
    /// Anything else (EIO, ENOSPC, EACCES…): the move it serves stops here.
    case other
}

/// A line a plan has the daemon log: its level, its message and its fields, in order.
package struct PlanNote: Equatable, Sendable {
    package var level: LogLevel
    package var message: String
    package var fields: [String]
    package var values: [String]
    /// The interpreter adds an `error` field: the error `stop` stands for when given, else the last
    /// error the disk gave the plan.
    package var withError: Bool
    package var stop: PlanStop?

    package init(_ level: LogLevel, _ message: String, _ pairs: KeyValuePairs<String, String> = [:], withError: Bool = false,
                 stop: PlanStop? = nil) {
        self.level = level
        self.message = message
        fields = pairs.map(\.key)
        values = pairs.map(\.value)
        self.withError = withError || stop != nil
        self.stop = stop
    }
}
