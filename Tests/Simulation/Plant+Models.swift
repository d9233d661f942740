extension Plant {
    /// The disk models the plant check runs it on, in order: a plant only a file system without
    /// a journal can show (a missing fsync that the journal's commit of every operation before
    /// any fsync covers) is checked there alone, so the check does not spend the journalled block;
    /// one that needs a rare path (a `Retry-After` whose file comes back unchanged with no crash
    /// or clock jump between) meets it sooner without a journal, and is checked there first.
    package var models: [String] {
        switch self {
        case .quarantineUnsynced, .groupCommitOvercounts: return ["noJournal"]
        case .retryAfterIgnored: return ["noJournal", "journalled"]
        default: return SimulationRunner.models
        }
    }
}
