/// What a power cut leaves, in each model (docs/architecture.md, "The disk model of the
/// simulator"). Every choice is drawn from the caller's generator in a fixed order (sorted
/// inodes and names, never a dictionary's order), so one seed always gives one outcome.
extension SimDiskState {
    /// Replaces the state with one the model allows; that state is durable from then on.
    mutating func losePower(using rng: inout some RandomNumberGenerator) {
        let entries: [UInt64: [[UInt8]: UInt64]]
        switch model {
        case .journalled: entries = journalPrefix(using: &rng)
        case .noJournal: entries = independentEntries(using: &rng)
        }
        rebuild(entries, using: &rng)
    }

    /// `journalled`: the committed entries, plus a prefix of the operations since the commit
    /// (from none to all), each operation whole.
    private func journalPrefix(using rng: inout some RandomNumberGenerator) -> [UInt64: [[UInt8]: UInt64]] {
        var entries: [UInt64: [[UInt8]: UInt64]] = [:]
        // A plain remainder, not `Int.random(in:)`: its rejection sampling never ends on the
        // zeros a shrunk replay draws once its script runs out (seed 6569 ran out of memory).
        let kept = Int(rng.next() % UInt64(journal.count + 1))
        for operation in journal.prefix(kept) {
            for change in operation {
                entries[change.directory, default: nodes[change.directory]!.durableEntries][change.name] = change.inode
            }
        }
        return entries
    }

    /// `noJournal`: in each directory changed since its last fsync, each changed name keeps,
    /// on its own, its durable value or its volatile one.
    private func independentEntries(using rng: inout some RandomNumberGenerator) -> [UInt64: [[UInt8]: UInt64]] {
        var entries: [UInt64: [[UInt8]: UInt64]] = [:]
        for directory in dirtyDirectories.sorted() {
            let node = nodes[directory]!
            var kept = node.durableEntries
            let names = Set(node.entries.keys).union(node.durableEntries.keys).sorted(by: SimDiskState.precedes)
            for name in names where node.entries[name] != node.durableEntries[name] {
                if Bool.random(using: &rng) { kept[name] = node.entries[name] }
            }
            entries[directory] = kept
        }
        return entries
    }

    /// The disk after the cut: the inodes reachable from `/` through the surviving entries
    /// (`changed`, else each directory's durable entries); a file whose content changed since
    /// its last fsync or commit keeps the durable content or the volatile one, whole. An inode
    /// no surviving entry names is gone (what e2fsck would put in lost+found).
    private mutating func rebuild(_ changed: [UInt64: [[UInt8]: UInt64]], using rng: inout some RandomNumberGenerator) {
        var survivors: [UInt64: SimNode] = [:]
        var pending: [(inode: UInt64, parent: UInt64)] = [(Self.root, Self.root)]
        while let (inode, parent) = pending.popLast().map({ ($0.inode, $0.parent) }) {
            guard survivors[inode] == nil else { continue }  // a directory named twice (noJournal): kept once
            var node = nodes[inode]!
            node.parent = parent
            if node.isDirectory {
                node.entries = changed[inode] ?? node.durableEntries
                node.durableEntries = node.entries
                let children = node.entries.sorted { SimDiskState.precedes($0.key, $1.key) }.map(\.value)
                pending.append(contentsOf: children.reversed().map { ($0, inode) })
            }
            survivors[inode] = node
        }
        for inode in survivors.keys.sorted() {
            var node = survivors[inode]!
            if writebackLost.contains(inode) {
                node.content = node.durableContent
            } else if node.kind == .regular && node.content != node.durableContent && !Bool.random(using: &rng) {
                node.content = node.durableContent
            }
            node.durableContent = node.content
            node.links = 0
            survivors[inode] = node
        }
        for directory in survivors.values where directory.isDirectory {
            for inode in directory.entries.values { survivors[inode]!.links += 1 }
        }
        nodes = survivors
        journal = []
        newEntries = [:]
        delayedData = []
        dirtyDirectories = []
        firstUndurableChange = [:]
        dirtyContent = []
        writebackLost = []
    }
}
