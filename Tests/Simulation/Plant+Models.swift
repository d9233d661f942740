extension Plant {
    /// The disk models the plant check runs it on, in order: a plant only a file system without
    /// a journal can show (a missing fsync that the journal's commit of every operation before
    /// any fsync covers) is checked there alone, so the check does not spend the journalled block.
    package var models: [String] {
        switch self {
        case .quarantineUnsynced: return ["noJournal"]
        default: return SimulationRunner.models
        }
    }
}
