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
}
