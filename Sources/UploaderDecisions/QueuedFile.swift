import UploaderValues

/// A file the owner is told about, with what one cheap `lstat` said of it: the facts `order`
/// sorts by, gathered by the sender (watcher thread, start-up scan, move-back job) so the
/// core stays pure. A file that vanished before the `lstat` has zeros; its claim finds out.
package struct QueuedFile: Sendable, Equatable {
    package var path: RelativePath
    package var size: Int64
    package var mtimeNanos: Int64

    package init(_ path: RelativePath, size: Int64 = 0, mtimeNanos: Int64 = 0) {
        self.path = path
        self.size = size
        self.mtimeNanos = mtimeNanos
    }
}

extension UploadOrder {
    /// The number the waiting queue sorts by, smallest first; ties go by name.
    func rank(_ file: QueuedFile) -> Int64 {
        switch self {
        case .oldest: return file.mtimeNanos
        case .newest: return 0 &- file.mtimeNanos
        case .smallest: return file.size
        case .largest: return 0 &- file.size
        }
    }

    /// A file known only by its rank (its facts were not kept): the one fact `rank` reads, so
    /// it ranks where it did.
    func file(_ path: RelativePath, rank: Int64) -> QueuedFile {
        switch self {
        case .oldest: return QueuedFile(path, mtimeNanos: rank)
        case .newest: return QueuedFile(path, mtimeNanos: 0 &- rank)
        case .smallest: return QueuedFile(path, size: rank)
        case .largest: return QueuedFile(path, size: 0 &- rank)
        }
    }
}
