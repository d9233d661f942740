import UploaderSupport

/// A move of a file and its manifest from the outbox into sent/ or retry/, as a batch carries it.
struct PendingMove: Sendable {
    var path: RelativePath
    var manifest: Manifest
    var area: Spool.Area
    var target: RelativePath
    /// A live move (not recovery's): a file its producer took away meanwhile is filed nowhere.
    var live: Bool
    /// The final record was just renamed into the outbox: make that durable before anything moves.
    var recordFirst: Bool
}
