import Foundation
import UploaderSupport
import UploaderSpool
import UploaderDecisions

/// The checks that judge from the world — the disk's records, the server, what the world told
/// the daemon — rather than from the core's own sets, which a bug in them would fool.
extension Simulation {
    /// `slotBeforeAttempt`, judged from the file's record on the disk when a claim reports it
    /// ready (it waits for a slot from then) and when the core hands it a slot (its `.upload`
    /// effect): the record must not already hold an attempt this process opened — an attempt is
    /// written only by the upload a slot runs, and closed before the file can wait again.
    func checkSlotBeforeAttempt(_ path: RelativePath, _ moment: String) {
        guard violation == nil, disk.faultsDrawn == faultsAtBoot,
              let bytes = disk.contents(profile.spool.outbox + "/" + Spool.manifestName(for: path).display),
              let m = disk.manifestMemo.manifest(bytes), let last = m.attempts.last, last.endedAt == nil,
              let started = Timestamp.parse(last.startedAt), started >= process.bootedAt else { return }
        fail(.slotBeforeAttempt, "\(path.logSafe) \(moment) with an attempt already open in its record")
    }

    /// Runs the checks an effect calls for, before it is carried out.
    func checkBefore(_ effect: ProfileEffect) {
        switch effect {
        case .upload(let path, _):
            checkSlotBeforeAttempt(path, "is given a slot")
            checkOrder(path)
        case .claimAndUpload(let path, _): process.claimedInSlot.insert(path)
        default: break
        }
        process.seen.note(effect)
    }

    /// Runs the checks an event calls for, as the owner takes it in.
    func checkOnTaking(_ event: ProfileEvent) {
        told.note(event)
        process.seen.note(event)
        guard case .claimed(let path, let report) = event else { return }
        if case .unreadable = report, powerCuts > 0, let content = disk.contents(path.displayed(in: profile.spool.outbox)) {
            unhashedAfterPowerCut.insert(Producer.hash(content))
        }
        // A claim made in a slot has opened its attempt by now: it waits for nothing.
        if process.claimedInSlot.remove(path) == nil, report == .ready { checkSlotBeforeAttempt(path, "is claimed and waits for a slot") }
    }
}
