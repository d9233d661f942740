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
    /// The file the mover holds open (its claim's), when it holds one: an outbox name that now
    /// leads to another file (the producer's new one, put there since) is no name of this file.
    var file: FileSystem.Status? = nil
}
