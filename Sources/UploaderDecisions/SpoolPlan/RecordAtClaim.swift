import UploaderValues

/// The claim's first fork: what the record found beside a regular file asks for, judged from its
/// state and the file's size and mtime alone, before any disk step. Each branch then has plans
/// of its own (`settleMoveOfReplacedFile` then `settleChangedDelivery`; `settleMoveOfReplacedFile`
/// and `finishRecorded`; `finishCutMoveBack` and `RecordReuse`), each of which says for itself
/// when it does not apply.
package enum RecordAtClaim: Equatable, Sendable {
    /// `sent`, but the file is not the version sent: a new file under the name of a move that
    /// ended but for its record (the move ends), or the sent one written to before the move
    /// ended (that version comes back to be sent); the file here is claimed afresh.
    case changedDelivery
    /// A final state whose move is to be finished. `replacedFileFirst`: a move into retry/, which
    /// may turn out to be the move of a file the producer has since replaced under the name.
    case finishMove(replacedFileFirst: Bool)
    /// `queued` or `uploading`: a move back from retry/ cut before its record left retry/ is
    /// finished first, then the record is reused or the file claimed afresh.
    case reuseOrAfresh

    package static func judge(_ manifest: Manifest, size: Int64, mtimeText: String) -> RecordAtClaim {
        switch manifest.state {
        case .sent:
            manifest.size == size && manifest.mtime == mtimeText ? .finishMove(replacedFileFirst: false) : .changedDelivery
        case .retry, .failed:
            .finishMove(replacedFileFirst: true)
        case .queued, .uploading:
            .reuseOrAfresh
        }
    }
}
