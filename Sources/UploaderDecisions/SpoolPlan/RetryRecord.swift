import UploaderValues

/// What start-up's look at retry/ made of one record there (`SpoolMoves.settleRetryRecord`).
package enum RetryRecordSettlement: Equatable, Sendable {
    /// Left as it is: a record that cannot be read, or one of a file filed for good.
    case stays
    /// Waiting in retry/ for its next attempt, at the record's `next_attempt_at` (nil: now).
    case due(at: String?)
    /// A move back cut short, finished: the file is queued in the outbox under this name.
    case movedBack(RelativePath)
    /// A move back that cannot be finished now: due now, so that the daemon's own move back
    /// tries it again (and again a few seconds after each failure).
    case moveBackDueNow
    /// Nothing left to schedule: a stale move-back record removed, or a record moved aside.
    case settled
}

/// The decisions start-up makes about each record in retry/, planned over `DiskSteps`.
extension SpoolMoves {
    /// The record of `file` in retry/, as start-up finds it. A record waiting for its next
    /// attempt is due then; a move back cut short (`queued` or `uploading`) is finished under the
    /// retry-move lock, as the live moves are; a record in another state whose file has left
    /// retry/ is moved aside: a move into retry/ links the file before its record, and a move back
    /// rewrites the record `queued` before the file goes, so only a file brought back to the
    /// outbox, cut before its record followed, leaves one (the file is claimed where it is).
    package static func settleRetryRecord<D: DiskSteps>(_ file: RelativePath, naming: StoredAsNaming,
                                                        on disk: inout D) -> RetryRecordSettlement {
        let inRetry = SpoolPlace(.retry, file)
        guard case .parsed(let manifest) = disk.readRecord(inRetry) else { return .stays }
        switch manifest.state {
        case .retry, .sent, .failed:
            let fileThere: Bool
            do throws(PlanStop) {
                fileThere = try disk.lookUp(inRetry) != nil
            } catch {
                // Never taken for gone: the record stays, and is judged as if its file were there.
                disk.note(PlanNote(.warn, "cannot look at a file in retry/; its manifest stays", ["file": file.logSafe], withError: true))
                fileThere = true
            }
            guard fileThere else {
                quarantine(inRetry, because: "manifest in retry/ with no file", on: &disk)
                return .settled
            }
            return manifest.state == .retry ? .due(at: manifest.nextAttemptAt) : .stays
        case .queued, .uploading:
            do throws(PlanStop) {
                return .movedBack(try disk.underRetryMoveLock(exclusive: false) { disk throws(PlanStop) in
                    try moveBack(fromRetry: file, resetBackoff: false, naming: naming, on: &disk)
                })
            } catch .supersededRecord {
                disk.note(PlanNote(.info, "removed an old move-back record from retry/; the outbox has a later one", ["file": file.logSafe]))
                return .settled
            } catch {
                if !disk.exists(inRetry) && disk.exists(inRetry.record) {
                    // A move back whose file left long ago: a stale record, moved aside like any orphan.
                    quarantine(inRetry, because: "manifest in retry/ with no file", on: &disk)
                    return .settled
                }
                disk.note(PlanNote(.warn, "cannot finish an interrupted move back from retry/; it is tried again", ["file": file.logSafe],
                                   stop: error))
                return .moveBackDueNow
            }
        }
    }
}
