import UploaderValues

/// What became of the record of a file that has left both the outbox and the place it names.
package enum LeftFileRecord: Equatable, Sendable {
    /// A deletion (`after_send = delete`) cut before its end, finished: the record is gone too.
    case deletionFinished
    /// The deletion could not be finished: the record stays, for the next start.
    case kept
    /// Not a deletion: the record's second name a cut move left goes; the record is to be moved aside.
    case toMoveAside
}

/// What start-up made of a record in the outbox whose file is not beside it.
package enum OrphanSettlement: Equatable, Sendable {
    /// Nothing to queue: not a record, moved aside, left for the next start, or its move finished
    /// with the file already in place.
    case nothing
    /// The file is back under the record's name, to be queued; `beside`, a changed delivery that
    /// came back under a free name as a file of its own, to be queued too.
    case broughtBack(RelativePath, beside: RelativePath?)
    /// The file had its new name, the record followed it there (its hook may be due; a file in
    /// retry/ is due as the record says).
    case moved(SpoolPlace, Manifest)
}

/// The decisions start-up makes about records whose files are not beside them — moves cut by a
/// crash, files taken away by their producers — planned over `DiskSteps`.
extension SpoolMoves {
    /// The record at `file` in the outbox whose file is not there (gone, or another entry under
    /// the name) and has left the place the record names.
    package static func settleRecordOfLeftFile<D: DiskSteps>(_ file: RelativePath, manifest: Manifest, naming: StoredAsNaming,
                                                             afterSendDeletes: Bool, on disk: inout D) -> LeftFileRecord {
        let stored = manifest.storedAs.flatMap(naming.place)
        if let stored, stored.area != .outbox, deletesAfterMove(manifest, in: stored.area, afterSendDeletes: afterSendDeletes) {
            // A delivery's record alone in the outbox with its file gone from sent/: a deletion cut
            // before the record went. Its names there go durably, then the record.
            do throws(PlanStop) {
                try dropSecondNames(of: file, at: stored, on: &disk)
                try disk.unlink(SpoolPlace(.outbox, file).record)
                disk.note(PlanNote(.info, "finished removing a delivered file (after_send = delete)", ["file": file.logSafe]))
                return .deletionFinished
            } catch {
                disk.note(PlanNote(.error, "cannot finish removing a delivered file", ["file": file.logSafe], withError: true))
                return .kept
            }
        }
        if let stored, stored.area != .outbox {
            do throws(PlanStop) {
                try dropSecondNames(of: file, at: stored, on: &disk)
            } catch {
                disk.note(PlanNote(.warn, "cannot remove a stale second name of a manifest", ["file": file.logSafe], withError: true))
            }
        }
        return .toMoveAside
    }

    /// A record in the outbox whose file is not beside it, as start-up finds it: a move cut after
    /// the file's link is finished (the record follows its file), a move back cut before the
    /// file's is finished (the file follows its record), a delivery written to after its upload
    /// comes back to be sent again, and a record whose file is nowhere is moved aside.
    package static func settleOrphan<D: DiskSteps>(_ file: RelativePath, naming: StoredAsNaming, afterSendDeletes: Bool,
                                                   on disk: inout D) -> OrphanSettlement {
        let outboxFile = SpoolPlace(.outbox, file)
        let manifest: Manifest
        switch disk.readRecord(outboxFile) {
        case .missing:
            return .nothing
        case .corrupt, .unreadable:
            // Not a manifest we could have written (ours are renamed into place whole): a file that
            // merely ends in `.manifest.json`. Such names are ignored, so it stays put.
            disk.note(PlanNote(.debug, "ignored: a name ending in .manifest.json that is no manifest, with no file beside it",
                               ["file": file.appendingSuffix(SpoolPlace.recordSuffix).logSafe]))
            return .nothing
        case .parsed(let record):
            manifest = record
        }
        guard let stored = manifest.storedAs.flatMap(naming.place), stored.area != .outbox, disk.exists(stored) else {
            // A cut move may have given the record a second name in sent/ or retry/: it goes (the
            // record itself is kept, moved aside).
            guard settleRecordOfLeftFile(file, manifest: manifest, naming: naming, afterSendDeletes: afterSendDeletes,
                                         on: &disk) == .toMoveAside else { return .nothing }
            quarantine(outboxFile, because: "manifest with no file (the file vanished)", on: &disk)
            return .nothing
        }
        func finish(_ disk: inout D) throws(PlanStop) -> OrphanSettlement {
            // `uploader retry` may have moved the file back while this waited for the lock: the
            // record read above names no move any more, and the file is claimed as it is now.
            if stored.area == .retry, disk.readRecord(outboxFile).manifest != manifest {
                return disk.exists(outboxFile) ? .broughtBack(file, beside: nil) : .nothing
            }
            switch manifest.state {
            case .sent, .retry, .failed:
                let ours = try holdsOwnRecord(file, manifest: manifest, at: stored, on: &disk)
                switch try requeueIfChangedAfterUpload(file, manifest: manifest, at: stored, on: &disk) {
                case .underItsName?: return .broughtBack(file, beside: nil)
                case .beside(let beside)?: return .broughtBack(file, beside: beside)
                case nil: break
                }
                if disk.exists(stored.record) {
                    if ours {
                        // Step 4 was done, step 5 was not: the record is in place; this is its old name.
                        // A move cut before its fsyncs (kill -9) left those names unsynced: made
                        // durable first, and so the removal of the file's outbox name.
                        try endMove(file, area: stored.area, target: stored.path,
                                    deletesAfter: deletesAfterMove(manifest, in: stored.area, afterSendDeletes: afterSendDeletes),
                                    namesMayBeUnsynced: true, on: &disk)
                        // Said as a move finished, as when the record had to follow: a running
                        // daemon's rescan learns of its retry due and its hook due only from this.
                        return .moved(stored, manifest)
                    }
                    quarantine(outboxFile, because: "duplicate manifest; \(manifest.storedAs ?? "") already has one", on: &disk)
                    return .nothing
                }
                // The file has its new name, the record not yet: it follows its file.
                try completeMove(file, manifest: manifest, to: stored.area, as: stored.path,
                                 deletesAfter: deletesAfterMove(manifest, in: stored.area, afterSendDeletes: afterSendDeletes), on: &disk)
                disk.note(PlanNote(.info, "paired a moved file with its manifest", ["file": file.logSafe, "stored_as": manifest.storedAs ?? ""]))
                return .moved(stored, manifest)
            case .queued, .uploading:
                // A move back cut before the file's link: the file follows its record.
                try bringBack(stored, to: file, on: &disk)
                disk.note(PlanNote(.info, "brought a file back from \(stored.area.rawValue)/ to its manifest", ["file": file.logSafe]))
                return .broughtBack(file, beside: nil)
            }
        }
        do throws(PlanStop) {
            // Into or out of retry/: under the retry-move lock, as the live moves.
            return try stored.area == .retry ? disk.underRetryMoveLock(exclusive: false, finish) : finish(&disk)
        } catch {
            disk.note(PlanNote(.error, "cannot finish an interrupted move", ["file": file.logSafe], withError: true))
            return .nothing
        }
    }

    /// Moves the record beside `place` aside into `.quarantine/`, saying why.
    static func quarantine<D: DiskSteps>(_ place: SpoolPlace, because reason: String, on disk: inout D) {
        if case .name(let aside) = disk.perform(.quarantineRecord(place)) {
            disk.note(PlanNote(.warn, "\(reason); manifest moved aside", ["file": place.path.logSafe, "manifest": aside.display]))
        } else {
            disk.note(PlanNote(.error, "\(reason); cannot move it aside", ["file": place.path.logSafe], withError: true))
        }
    }
}

extension DiskSteps {
    /// Has the daemon log `note`.
    mutating func note(_ note: PlanNote) { _ = perform(.note(note)) }
}
