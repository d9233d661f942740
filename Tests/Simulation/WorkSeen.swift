import UploaderValues
import UploaderDecisions

/// The owner's work as the world saw it — the effects carried out and the reports taken in —
/// so `onlineMeansWorking` and `orderWithinSlots` judge slots, claims and ready files without
/// the core's own sets, which a bug in them would fool. One per process: a new one starts empty.
struct WorkSeen {
    /// Files given a transfer slot (`upload`, `claimAndUpload`) whose job has not reported its attempt.
    private(set) var slots: Set<RelativePath> = []
    /// Claims started ahead of a slot (`claim`) not yet reported.
    private(set) var claimsAhead: Set<RelativePath> = []
    /// Files whose claim ahead reported them ready, not since given a slot or let go.
    private(set) var ready: Set<RelativePath> = []
    /// Files whose attempt was reported and whose record may still say `uploading`: until their
    /// settle reports the record rewritten (or the settle, or a quarantine, ends).
    private(set) var recordsOpenAfterAttempt: Set<RelativePath> = []

    /// Records that may say `uploading`: every slot's, and those of settles not yet past their rewrite.
    var openRecords: Int { slots.count + recordsOpenAfterAttempt.count }

    mutating func note(_ effect: ProfileEffect) {
        switch effect {
        case .upload(let path, _):
            ready.remove(path)
            slots.insert(path)
        case .claimAndUpload(let path, _): slots.insert(path)
        case .claim(let path): claimsAhead.insert(path)
        case .release(let path):
            ready.remove(path)
            recordsOpenAfterAttempt.remove(path)
        default: break
        }
    }

    mutating func note(_ event: ProfileEvent) {
        switch event {
        case .claimed(let path, let report):
            if claimsAhead.remove(path) != nil {
                if report == .ready { ready.insert(path) }
            } else if report != .ready {
                // A claim in its slot that found nothing to send ends its slot's work.
                slots.remove(path)
            }
        case .attempted(let path, let report):
            // The job says whether it wrote an attempt into the record, and whether it is filing
            // the file itself (its record rewritten already).
            if slots.remove(path) != nil, !report.filing, report.outcome.wroteRecord { recordsOpenAfterAttempt.insert(path) }
        case .recordRewritten(let path), .settled(let path, _), .quarantined(let path, _):
            recordsOpenAfterAttempt.remove(path)
        default: break
        }
    }
}
