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

    /// Whether the owner has heard the destination is there, judged from its jobs' reports alone
    /// (not the core's own reachability): down from an attempt that found it unreachable or a
    /// probe that failed; up again only from a probe that succeeded and was sent after the
    /// destination was last heard down (an answer from before says nothing of this outage).
    private(set) var destinationHeardUp = true
    /// Times the destination was heard going down.
    private var downsHeard = 0
    /// For each probe sent, by its number: `downsHeard` when it was sent.
    private var probesSent: [Int: Int] = [:]
    /// The destination refused our credentials (or the host key) since it last accepted a file:
    /// the owner may hold its files for them.
    private(set) var credentialsRefused = false

    mutating func note(_ effect: ProfileEffect) {
        switch effect {
        case .upload(let path, _):
            ready.remove(path)
            slots.insert(path)
        case .claimAndUpload(let path, _): slots.insert(path)
        case .claim(let path): claimsAhead.insert(path)
        case .probe(let ticket): probesSent[ticket.number] = downsHeard
        case .release(let path):
            ready.remove(path)
            recordsOpenAfterAttempt.remove(path)
        default: break
        }
    }

    mutating func note(_ event: ProfileEvent) {
        noteDestination(event)
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

    private mutating func noteDestination(_ event: ProfileEvent) {
        switch event {
        case .attempted(_, let report):
            switch report.outcome {
            case .unreachable: heardDown()
            case .rejected, .hostKeyMismatch: credentialsRefused = true
            case .delivered: credentialsRefused = false
            default: break
            }
        case .probed(let ticket, let problem):
            if problem != nil {
                heardDown()
            } else if !destinationHeardUp, probesSent[ticket.number] == downsHeard {
                destinationHeardUp = true
            }
        default: break
        }
    }

    private mutating func heardDown() {
        guard destinationHeardUp else { return }
        destinationHeardUp = false
        downsHeard += 1
    }
}
