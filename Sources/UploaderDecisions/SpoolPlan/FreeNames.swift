import UploaderValues

/// The choice of a name for a file in an area, planned over `DiskSteps`: `place`'s own, or the
/// next numbered one (`a.2.bin`, `a.3.bin`…). A name the disk will not show (an I/O error) stops
/// the search with that error: it is never passed over as free, nor for the next.
extension SpoolMoves {
    /// How many free names a live move tries before it gives up (the file stays queued): the
    /// name its record gave the file may be taken before the file's link (another move chose it
    /// too, or a file was put there by hand).
    package static let namesTried = 5

    /// Whether a move whose chosen name was found taken `taken` times so far writes its record
    /// again with the next free name, or stops with the last one's error.
    package static func choosesAnotherName(afterTaken taken: Int) -> Bool {
        precondition(taken >= 1, "asked after a name was found taken")
        return taken < namesTried
    }

    /// A name in `place`'s area under which neither a file nor a record exists, nor, in the
    /// outbox, another user's original waits beside it (`.upl-adopt.NAME`: its settling may give
    /// it that name back).
    package static func freeName<D: DiskSteps>(_ place: SpoolPlace, on disk: inout D) throws(PlanStop) -> RelativePath {
        var candidate = place.path, n = 2
        while try isTaken(SpoolPlace(place.area, candidate), on: &disk) {
            candidate = SpoolPlace.numbered(place.path, n)
            n += 1
        }
        return candidate
    }

    /// A name beside `path` in the outbox for the file at `target`, coming back there: a free
    /// one, or one that already leads to that very file with no record of its own (a bring-back
    /// cut after its link gave it that name; another would leave the file under two).
    package static func besideName<D: DiskSteps>(_ path: RelativePath, bringingBack target: SpoolPlace,
                                                 on disk: inout D) throws(PlanStop) -> RelativePath {
        guard let file = try disk.lookUp(target) else { return try freeName(SpoolPlace(.outbox, path), on: &disk) }
        var candidate = path, n = 2
        while true {
            let here = SpoolPlace(.outbox, candidate)
            if try disk.lookUp(here.record) == nil {
                if let there = try disk.lookUp(here) {
                    if there == file { return candidate }
                } else if try !adoptionPending(here, on: &disk) {
                    return candidate
                }
            }
            candidate = SpoolPlace.numbered(path, n)
            n += 1
        }
    }

    private static func isTaken<D: DiskSteps>(_ place: SpoolPlace, on disk: inout D) throws(PlanStop) -> Bool {
        if try disk.lookUp(place) != nil { return true }
        if try disk.lookUp(place.record) != nil { return true }
        guard place.area == .outbox else { return false }
        return try adoptionPending(place, on: &disk)
    }

    /// Another user's original still waits under `.upl-adopt.NAME` beside the outbox name.
    private static func adoptionPending<D: DiskSteps>(_ place: SpoolPlace, on disk: inout D) throws(PlanStop) -> Bool {
        try disk.lookUp(SpoolPlace(.outbox, SpoolPlace.adoptionLeftover(of: place.path))) != nil
    }
}
