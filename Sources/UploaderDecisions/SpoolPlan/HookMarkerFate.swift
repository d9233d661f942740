import UploaderValues

/// What start-up does with one marker in `.hooks-due/`, judged from the manifest it points to:
/// the marker is the only way start-up finds a hook still to run (it never reads sent/), so it
/// goes only when nothing is due any more, and only once that is durable.
package enum HookMarkerFate: Equatable, Sendable {
    /// Its hook is due, or (with `after_send = delete`) the delivered file still waits in sent/ to
    /// be removed after the run: the hook runs.
    case run
    /// Its manifest cannot be read (or is not a manifest): not run, and the marker stays for a
    /// start that can read it.
    case keepUnread
    /// The manifest is there with nothing due: the marker goes.
    case drop
    /// The manifest is gone: its absence is made durable first (the fsync of its directory), then
    /// the marker goes. A deletion whose last fsync failed has the manifest's unlink unsynced, and
    /// a power cut would bring it back with nothing left to remove it; a refused fsync keeps the
    /// marker for the next start.
    case dropOnceAbsenceIsDurable

    /// The fate of a marker of `hook` for a manifest in `area`, read as `record`; `hookIsDue` says
    /// whether a parsed manifest has that hook due.
    package static func judge(hook: String, area: SpoolArea, record: RecordRead, afterSendDeletes: Bool,
                              hookIsDue: (String, Manifest) -> Bool) -> HookMarkerFate {
        switch record {
        case .parsed(let manifest) where hookIsDue(hook, manifest):
            return .run
        case .parsed(let manifest) where afterSendDeletes && area == .sent && manifest.state == .sent:
            return .run
        case .parsed:
            return .drop
        case .missing:
            return .dropOnceAbsenceIsDurable
        case .corrupt, .unreadable:
            return .keepUnread
        }
    }
}
