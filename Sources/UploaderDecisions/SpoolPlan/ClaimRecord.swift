import UploaderValues

/// What a claim made of the record beside a name it found empty, or found holding another file.
package enum RecordSettlement: Equatable, Sendable {
    /// The move the record names is finished: the file is at this place, the record beside it.
    case finished(SpoolPlace, Manifest)
    /// Nothing is left of the file; its record (if any) went with it.
    case vanished
    /// A file has the name again (put back by `uploader retry` under the lock): claimed as it is.
    case cameBack
    /// The file came back from sent/ changed since its upload: claimed afresh. `besideNewFile`:
    /// a new file had taken its name, and it came back beside it under this free name (a file of
    /// its own, to be queued).
    case claimAfresh(besideNewFile: RelativePath?)
    /// The record's move could not be finished (the interpreter holds the error); the record stays.
    case cannotFinish
    /// The record names no such move: the claim goes on.
    case notSuch
}

/// The claim's decisions about a file's record — a name found empty, a non-regular entry under
/// the name, a record of a move whose file the producer replaced — planned over `DiskSteps`.
extension SpoolMoves {
    /// No file under `path`. A record left beside it that names a final state, whose file already
    /// has its new name (a move cut after the file's step), is not garbage: the move is finished.
    /// Anything else is a vanished file (its record goes with it).
    package static func settleVanished<D: DiskSteps>(_ path: RelativePath, naming: StoredAsNaming, afterSendDeletes: Bool,
                                                     on disk: inout D) -> RecordSettlement {
        guard case .parsed(let manifest) = disk.readRecord(SpoolPlace(.outbox, path)), [.sent, .retry, .failed].contains(manifest.state),
              let stored = manifest.storedAs.flatMap(naming.place), stored.area != .outbox else {
            return dropRecordOfVanished(path, on: &disk)
        }
        guard disk.exists(stored) else {
            // Removed by the producer during a move cut after the record's link: the record's new
            // name goes with the file, as its outbox name will.
            dropStaleNames(path, at: stored, on: &disk)
            return dropRecordOfVanished(path, on: &disk)
        }
        let deletes = deletesAfterMove(manifest, in: stored.area, afterSendDeletes: afterSendDeletes)
        func finish(_ disk: inout D) throws(PlanStop) {
            if !disk.exists(stored.record) {
                try completeMove(path, manifest: manifest, to: stored.area, as: stored.path, deletesAfter: deletes, on: &disk)
            } else {
                // The new names may be unsynced (a move cut before its fsync): durable before the old goes.
                try endMove(path, area: stored.area, target: stored.path, deletesAfter: deletes, namesMayBeUnsynced: true, on: &disk)
            }
        }
        do throws(PlanStop) {
            // Written to through its second name after its upload: uploaded again.
            switch try requeueIfChangedAfterUpload(path, manifest: manifest, at: stored, on: &disk) {
            case .underItsName?: return .claimAfresh(besideNewFile: nil)
            case .beside(let beside)?: return .claimAfresh(besideNewFile: beside)
            case nil: break
            }
            if stored.area == .retry { try disk.underRetryMoveLock(exclusive: false, finish) } else { try finish(&disk) }
        } catch {
            return .cannotFinish
        }
        disk.note(PlanNote(.info, "finished an interrupted move", ["file": path.logSafe, "id": manifest.id, "stored_as": manifest.storedAs ?? ""]))
        return .finished(stored, manifest)
    }

    /// The file is gone: its record goes with it. Under the retry-move lock, and only while the
    /// name is still empty: `uploader retry` puts a file back under a name record first, then
    /// file, holding that lock, and such a file is claimed with the record it came back with. A
    /// record that cannot be removed stays (start-up moves a record without its file aside).
    static func dropRecordOfVanished<D: DiskSteps>(_ path: RelativePath, on disk: inout D) -> RecordSettlement {
        let file = SpoolPlace(.outbox, path)
        do throws(PlanStop) {
            let cameBack = try disk.underRetryMoveLock(exclusive: false) { disk throws(PlanStop) -> Bool in
                if try disk.lookUp(file) != nil { return true }
                if disk.exists(file.record) { try disk.unlink(file.record) }
                return false
            }
            if cameBack { return .cameBack }
        } catch {
            disk.note(PlanNote(.warn, "cannot remove the manifest of a vanished file",
                               ["file": path.appendingSuffix(SpoolPlace.recordSuffix).logSafe], withError: true))
        }
        return .vanished
    }

    /// The second names a cut move left of a file and its record, dropped; a failure is said and
    /// left for the next claim.
    package static func dropStaleNames<D: DiskSteps>(_ path: RelativePath, at stored: SpoolPlace, on disk: inout D) {
        do throws(PlanStop) {
            try dropSecondNames(of: path, at: stored, on: &disk)
        } catch {
            disk.note(PlanNote(.warn, "cannot remove a stale second name of a file", ["file": path.logSafe, "name": naming(stored)],
                               withError: true))
        }
    }

    /// A record says `sent`, but the file under its name is not the version sent (written to
    /// before the move finished): a changed second name the move left in sent/ comes back to the
    /// outbox beside it, and the move's second names go. The file here is then claimed afresh;
    /// the free name the changed one came back under, if it did, is returned to be queued.
    @discardableResult
    package static func settleChangedDelivery<D: DiskSteps>(_ path: RelativePath, manifest: Manifest, naming: StoredAsNaming,
                                                            on disk: inout D) -> RelativePath? {
        guard let stored = manifest.storedAs.flatMap(naming.place), stored.area != .outbox else { return nil }
        var beside: RelativePath?
        do throws(PlanStop) {
            if case .beside(let name)? = try requeueIfChangedAfterUpload(path, manifest: manifest, at: stored, on: &disk) { beside = name }
        } catch {
            disk.note(PlanNote(.warn, "cannot bring back a changed file from \(stored.area.rawValue)/",
                               ["file": path.logSafe, "name": manifest.storedAs ?? ""], withError: true))
        }
        dropStaleNames(path, at: stored, on: &disk)
        return beside
    }

    /// A record of a move into retry/ or sent/ whose file already has its new name there, and
    /// whose outbox name leads to another file (`file`): the move was cut after the file's outbox
    /// name went (or its record's unlink was refused), and the producer put a new file under it.
    /// That move ends (its record leaves the outbox, a delivery's hook stays due) and the new file
    /// is a file of its own. A delivery counts only when the name in sent/ holds the version sent;
    /// one written to since is a changed delivery (`settleChangedDelivery`). `notSuch` when the
    /// record is no such move.
    package static func settleMoveOfReplacedFile<D: DiskSteps>(_ path: RelativePath, manifest: Manifest, file: FileIdentity,
                                                               naming: StoredAsNaming, afterSendDeletes: Bool,
                                                               on disk: inout D) -> RecordSettlement {
        guard let stored = manifest.storedAs.flatMap(naming.place),
              (stored.area == .retry && [.retry, .failed].contains(manifest.state)) || (stored.area == .sent && manifest.state == .sent)
        else { return .notSuch }
        func settle(_ disk: inout D) throws(PlanStop) -> RecordSettlement {
            // A record `uploader retry` has replaced meanwhile names no move any more.
            guard disk.readRecord(SpoolPlace(.outbox, path)).manifest == manifest, let there = try disk.lookUp(stored), there != file,
                  try holdsOwnRecord(path, manifest: manifest, at: stored, on: &disk) else { return .notSuch }
            if stored.area == .sent {
                guard let delivered = try disk.inspect(stored), delivered.isVersion(of: manifest) else { return .notSuch }
            }
            try endMove(path, area: stored.area, target: stored.path,
                        deletesAfter: deletesAfterMove(manifest, in: stored.area, afterSendDeletes: afterSendDeletes),
                        namesMayBeUnsynced: true, on: &disk)
            disk.note(PlanNote(.info, "finished an interrupted move; the new file under its name is claimed on its own",
                               ["file": path.logSafe, "id": manifest.id, "stored_as": manifest.storedAs ?? ""]))
            return .finished(stored, manifest)
        }
        do throws(PlanStop) {
            return try stored.area == .retry ? disk.underRetryMoveLock(exclusive: false, settle) : settle(&disk)
        } catch {
            return .cannotFinish
        }
    }

    /// A non-regular entry (`what`: "symlink", "FIFO"…) under a name with a record beside it: the
    /// record belongs to a file swapped out (e.g. for a symlink during its upload). It is settled
    /// when it is a move whose file has left, or a changed delivery (brought back to be sent, under
    /// the free name returned); otherwise it is moved aside, never deleted.
    @discardableResult
    package static func settleRecordBesideEntry<D: DiskSteps>(_ path: RelativePath, what: String, naming: StoredAsNaming,
                                                              afterSendDeletes: Bool, on disk: inout D) -> RelativePath? {
        let file = SpoolPlace(.outbox, path)
        guard disk.exists(file.record) else { return nil }
        if case .parsed(let manifest) = disk.readRecord(file), let stored = manifest.storedAs.flatMap(naming.place), stored.area != .outbox {
            // A move whose file has left the place it names (with `after_send = delete`, a
            // deletion cut before its end): settled as a record alone in the outbox is.
            if !disk.exists(stored),
               settleRecordOfLeftFile(path, manifest: manifest, naming: naming, afterSendDeletes: afterSendDeletes, on: &disk) != .toMoveAside {
                return nil
            }
            // A delivery whose move into sent/ was cut after its links, written to afterwards
            // through the name the move had not taken away: that version comes back beside the
            // entry to be sent, and the record goes. A failure leaves it for the next claim.
            if manifest.state == .sent, stored.area == .sent {
                do throws(PlanStop) {
                    switch try requeueIfChangedAfterUpload(path, manifest: manifest, at: stored, on: &disk) {
                    case .beside(let beside)?: return beside
                    case .underItsName?: return nil
                    case nil: break
                    }
                } catch {
                    disk.note(PlanNote(.error, "cannot bring back a delivered file changed after its upload", ["file": path.logSafe],
                                       withError: true))
                    return nil
                }
            }
        }
        quarantine(file, because: "the file of this manifest was replaced by a \(what)", on: &disk)
        return nil
    }

    private static func naming(_ place: SpoolPlace) -> String { "\(place.area.rawValue)/\(place.path.display)" }
}
