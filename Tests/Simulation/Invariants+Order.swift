import UploaderValues
import UploaderDecisions

/// What the world told the daemon of each file — its size and mtime, in the events that name
/// one — so `orderWithinSlots` ranks files by those facts and `order`, not by the core's own ranks.
struct ToldFacts {
    private var facts: [RelativePath: QueuedFile] = [:]
    /// Files told of with two different sets of facts: their rank is whichever the daemon kept.
    private var changed: Set<RelativePath> = []

    mutating func note(_ event: ProfileEvent) {
        switch event {
        case .recovered(let files, _, _), .found(let files): for file in files { note(file) }
        case .movedBack(_, let file?): note(file)
        default: break
        }
    }

    private mutating func note(_ file: QueuedFile) {
        if let known = facts[file.path], known != file { changed.insert(file.path) }
        facts[file.path] = file
    }

    /// The facts told of `path`, if it was told of and they never changed.
    func steady(_ path: RelativePath) -> QueuedFile? { changed.contains(path) ? nil : facts[path] }
}

extension Simulation {
    /// `orderWithinSlots`, as the core gives `path` a slot: no file the world saw reported ready
    /// beside it ranks before it by the configured `order` (ties by name). Files whose facts
    /// changed are left out: the daemon may rank them by either.
    func checkOrder(_ path: RelativePath) {
        guard violation == nil, let mine = told.steady(path) else { return }
        let order = process.configured.order
        for other in process.seen.ready where other != path {
            guard let theirs = told.steady(other), Self.key(theirs, order) < Self.key(mine, order) else { continue }
            return fail(.orderWithinSlots, "\(path.logSafe) is given a slot while \(other.logSafe), ready beside it, "
                        + "comes first by order = \(order.rawValue)")
        }
    }

    /// Where `file` goes by `order`, from the facts the world told of it.
    static func key(_ file: QueuedFile, _ order: UploadOrder) -> (Int64, RelativePath) {
        switch order {
        case .oldest: return (file.mtimeNanos, file.path)
        case .newest: return (-file.mtimeNanos, file.path)
        case .smallest: return (file.size, file.path)
        case .largest: return (-file.size, file.path)
        }
    }
}
