import Foundation
import UploaderSupport
import UploaderDecisions

/// The one interpreter of the spool's plans (`MoveBatchPlan`, `MoveEndPlan`): performs each
/// `DiskStep` on the spool's file system and hands back what came of it. It decides nothing;
/// the error behind each refusal is kept for the move it served, so the mover reports the very
/// error the disk gave.
struct DiskStepPerformer: DiskSteps {
    let lifecycle: FileLifecycle
    /// The moves the plan's indices name (for a hook's marker and the ledger's lines).
    let moves: [PendingMove]
    /// The last error the disk gave each move, by index.
    private(set) var errors: [Int: any Error] = [:]

    /// The time a record moved aside is named by (`quarantineRecord`), from the caller's clock.
    let now: Date?

    /// What an fstat of the file the caller holds open says (`inspectHeld`).
    let heldFacts: (() throws -> FileFacts)?

    /// The file the caller holds open and what its fstat said when claimed (`copyHeld`).
    let heldFile: (fd: Int32, status: FileSystem.Status)?

    init(lifecycle: FileLifecycle, moves: [PendingMove], now: Date? = nil, heldFacts: (() throws -> FileFacts)? = nil,
         heldFile: (fd: Int32, status: FileSystem.Status)? = nil) {
        self.lifecycle = lifecycle
        self.moves = moves
        self.now = now
        self.heldFacts = heldFacts
        self.heldFile = heldFile
    }

    private var spool: Spool { lifecycle.spool }
    private var fs: any SpoolFileSystem { spool.fs }

    /// The last error the disk gave a single-file plan, said in the line that reports its end.
    var lastError: String { errors[0].map { "\($0)" } ?? "unknown error" }

    /// Runs `next`/`took` until the plan has no step left.
    mutating func run(_ next: () -> DiskStep?, _ took: (StepOutcome) -> Void) {
        while let step = next() { took(perform(step)) }
    }

    mutating func perform(_ step: DiskStep) -> StepOutcome {
        do {
            switch step {
            case .syncDirectory(let place, _):
                try spool.syncDirectory(of: place.path, in: place.area)
            case .makeParents(let place, _):
                try lifecycle.makeDurableParents(of: place.path, in: place.area)
            case .lookUp(let place, _):
                let status = try fs.statusIfPresent(name(place), in: spool.directory(place.area))
                return .found(status.map { FileIdentity(device: $0.device, inode: $0.inode) })
            case .markHookDue(let manifest, let place, _):
                try HookLedger(spool: spool).ensureMarker(for: manifest, at: place.path, in: place.area)
            case .link(let from, let to, _):
                if to.kind == .record, to.area != .outbox, PlantedBug.manifestDroppedInMove.isActive { return .done }
                try fs.link(name(from), in: spool.directory(from.area), to: name(to), in: spool.directory(to.area))
            case .rename(let from, let to, _):
                try fs.rename(name(from), in: spool.directory(from.area), to: name(to), in: spool.directory(to.area), replace: false)
            case .unlink(let place, _):
                if place.kind == .file, place.area == .outbox, let bug = PlantedBug.active {
                    return try plantedOutboxUnlink(place, bug)
                }
                try fs.unlink(name(place), in: spool.directory(place.area))
            case .recordDeliveries(let manifests, _):
                spool.sentLedger.record(manifests, logger: lifecycle.logger)
            case .inspect(let place):
                let status = try fs.statusIfPresent(name(place), in: spool.directory(place.area))
                return .facts(status?.facts)
            case .readRecord(let place):
                let read = spool.readManifest(for: place.path, in: place.area)
                if case .failure(.unreadable(let error)) = read { errors[0] = error }
                return .record(read.recordRead)
            case .writeRecord(let manifest, let place, let syncDirectory):
                try spool.writeManifest(manifest, for: place.path, in: place.area, syncDirectory: syncDirectory)
            case .quarantineRecord(let place):
                guard let now else { preconditionFailure("a plan that moves records aside is run with the time to name them by") }
                return .name(RelativePath(try spool.quarantineManifest(for: place.path, in: place.area, now: now)))
            case .lookUpHookDue(let place, let hook):
                let marker = HookLedger.Marker(area: place.area, path: place.path, hook: hook)
                let status = try fs.statusIfPresent(marker.name, in: spool.paths.hooksDue)
                return .found(status.map { FileIdentity(device: $0.device, inode: $0.inode) })
            case .mayLink(let place):
                let directory = spool.directory(place.area)
                let status = try fs.status(name(place), in: directory)
                return .answer(fs.mayLink(name(place), in: directory, status: status))
            case .copyHeld(let place):
                guard let heldFile else { preconditionFailure("a plan asked to copy a held file its caller does not hold") }
                try fs.copyFile(from: heldFile.fd, status: heldFile.status, to: name(place), in: spool.directory(place.area))
            case .exchange(let a, let b):
                try fs.exchange(name(a), in: spool.directory(a.area), with: name(b), in: spool.directory(b.area))
            case .renameOver(let from, let to):
                try fs.rename(name(from), in: spool.directory(from.area), to: name(to), in: spool.directory(to.area), replace: true)
            case .sameBytes(let a, let b):
                return .answer(try FileAdoption.sameBytes(name(a), in: spool.directory(a.area), name(b), in: spool.directory(b.area), fs: fs))
            case .inspectHeld:
                guard let heldFacts else { preconditionFailure("a plan asked about a held file its caller does not hold") }
                return .facts(try heldFacts())
            case .note(let note):
                let said = note.stop.map { "\(self.error(of: $0))" } ?? errors[0].map { "\($0)" } ?? "unknown"
                let errorPair = note.withError ? [("error", said)] : []
                lifecycle.logger.log(note.level, note.message, pairs: Array(zip(note.fields, note.values)) + errorPair)
            }
            return .done
        } catch {
            for move in step.moves { errors[move] = error }
            return .refused(Self.refusal(error))
        }
    }

    mutating func underRetryMoveLock<T>(exclusive: Bool, _ body: (inout DiskStepPerformer) throws(PlanStop) -> T) throws(PlanStop) -> T {
        var stop: PlanStop?
        var result: T?
        var performer = self
        do {
            result = try RetryMoveLock(spool: spool).around(exclusive ? .exclusive : .shared) { () throws -> T? in
                do throws(PlanStop) { return try body(&performer) } catch { stop = error; return nil }
            }
        } catch {
            performer.errors[0] = error
            stop = .refused(Self.refusal(error))
        }
        self = performer
        if let stop { throw stop }
        return result!
    }

    /// The error a planner's stop stands for, as the spool's callers have always heard it.
    func error(of stop: PlanStop) -> any Error {
        switch stop {
        case .refused: return errors[0] ?? SystemError("spool step", path: "", code: .io)
        case .changedDuringMove(let change, let beside): return FileLifecycle.ChangedDuringMove(change: change, broughtBackAs: beside)
        case .recordWithoutFile(let path):
            return FileLifecycle.RecordWithoutFile(path: path.displayed(in: spool.directory(.retry)))
        case .supersededRecord(let path):
            return FileLifecycle.SupersededRecord(path: path.displayed(in: spool.directory(.retry)))
        case .startOver: return SystemError("move back", path: "", code: .exists)
        case .recordChangedMeanwhile: return Claimer.RecordChangedMeanwhile()
        case .targetTaken(let target): return FileLifecycle.TargetTaken(target: target)
        case .recordMissing(let place):
            return errors[0] ?? SystemError("read manifest", path: Spool.manifestName(for: place.path).displayed(in: spool.directory(place.area)),
                                            code: .noEntry)
        }
    }

    /// The error behind `failure` of the move at `index`, as the mover throws it.
    func error(of failure: MoveFailure, move index: Int) -> any Error {
        switch failure {
        case .targetTaken(let target): return FileLifecycle.TargetTaken(target: target)
        case .removedFromOutbox: return FileLifecycle.ChangedDuringMove(change: "removed from the outbox")
        case .refused: return errors[index] ?? SystemError("move", path: moves[index].path.logSafe, code: .io)
        }
    }

    /// The unlink of a file's outbox name with a planted bug (`PlantedBug`) on: `outboxNameKept`
    /// does nothing, `moveDeletes` removes the file's name in retry/ as well; any other performs it.
    private func plantedOutboxUnlink(_ place: SpoolPlace, _ bug: PlantedBug) throws -> StepOutcome {
        let file = name(place), outbox = spool.directory(.outbox)
        let hidden = file.name.bytes.first == UInt8(ascii: ".")
        if bug == .outboxNameKept, !hidden { return .done }
        let here = bug == .moveDeletes && !hidden ? try fs.status(file, in: outbox) : nil
        try fs.unlink(file, in: outbox)
        if let here, let there = try? fs.status(file, in: spool.directory(.retry)), there.inode == here.inode {
            try fs.unlink(file, in: spool.directory(.retry))
        }
        return .done
    }

    /// The name a place has in its area's directory.
    private func name(_ place: SpoolPlace) -> RelativePath {
        place.kind == .record ? Spool.manifestName(for: place.path) : place.path
    }

    private static func refusal(_ error: any Error) -> DiskRefusal {
        guard let error = error as? SystemError else { return .other }
        switch error.code {
        case .exists: return .exists
        case .notPermitted: return .notPermitted
        case .noEntry: return .noEntry
        default: return .other
        }
    }
}

extension PendingMove {
    /// This move as a plan receives it.
    var planned: PlannedMove {
        PlannedMove(path: path, manifest: manifest, area: area, target: target, live: live, recordFirst: recordFirst,
                    heldFile: file.map { FileIdentity(device: $0.device, inode: $0.inode) })
    }
}

extension Result where Success == Manifest, Failure == Spool.ManifestReadError {
    /// A manifest read as a plan sees it.
    var recordRead: RecordRead {
        switch self {
        case .success(let manifest): .parsed(manifest)
        case .failure(.missing): .missing
        case .failure(.corrupt): .corrupt
        case .failure(.unreadable): .unreadable
        }
    }
}
