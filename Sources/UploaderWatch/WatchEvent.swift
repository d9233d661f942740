import UploaderSupport
import UploaderConfig

/// What the watcher tells a profile about its outbox.
package enum WatchEvent: Sendable, Equatable {
    /// A file was closed after writing, renamed in, or hard-linked in: a candidate to claim.
    case fileReady(RelativePath)
    /// Files seen by CREATE alone or listed in a new directory, found ready in one pass: taken
    /// together (a directory of thousands moved in is one step of the owner, not thousands).
    case filesReady([RelativePath])
    /// A directory appeared (recursive outboxes scan it; others warn once).
    case directoryAppeared(RelativePath)
    /// Events may have been lost (queue overflow, outbox replaced): scan everything again.
    case rescanNeeded(String)
}
