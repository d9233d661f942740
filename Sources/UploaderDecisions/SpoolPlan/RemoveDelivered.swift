import UploaderValues

/// `after_send = delete` for a file filed in sent/ earlier (its hook has run since), planned over
/// `DiskSteps`.
extension SpoolMoves {
    /// What `removeDelivered` found in sent/ that was not what was sent: the bytes came back to
    /// the outbox under `queuedAs`, to be sent again; `size` is theirs.
    package struct NotWhatWasSent: Equatable, Sendable {
        package var queuedAs: RelativePath
        package var size: Int64
    }

    /// Removes the delivered file at `place` in sent/, then its record, each durably. When sent/ no
    /// longer holds what was sent — a power cut undid a write its producer never made durable, or
    /// it was written to through its name there — those bytes were never sent: they go back to the
    /// outbox first, under a free name, as a file of its own (found by the next scan).
    package static func removeDelivered<D: DiskSteps>(_ place: SpoolPlace, sent manifest: Manifest,
                                                      on disk: inout D) throws(PlanStop) -> NotWhatWasSent? {
        var cameBack: NotWhatWasSent?
        if let now = try disk.inspect(place), !now.isVersion(of: manifest) {
            // Under the name an earlier run cut after this link already gave it, if one did.
            let beside = SpoolPlace(.outbox, try besideName(manifest.outboxPath, bringingBack: place, on: &disk))
            try disk.run(.makeParents(beside, move: 0))
            try disk.link(place, to: beside)
            try disk.syncDirectory(of: beside)
            cameBack = NotWhatWasSent(queuedAs: beside.path, size: now.size)
        }
        try removeDelivered(place, on: &disk)
        return cameBack
    }

    /// Unlinks a delivered file from sent/ and then its record, each made durable before the next:
    /// a record gone means its file is gone, whatever a power cut keeps, and both are gone before
    /// whatever tells recovery the deletion was due (the outbox record, a hook marker) goes.
    package static func removeDelivered<D: DiskSteps>(_ place: SpoolPlace, on disk: inout D) throws(PlanStop) {
        for name in [place, place.record] where disk.exists(name) {
            try disk.unlink(name)
            try disk.syncDirectory(of: place)
        }
    }
}
