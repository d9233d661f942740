import Synchronization
import UploaderSupport

/// Production's `DirectorySyncer`, watched: each call that returns is checked against the disk,
/// so that every entry change made in the directory before the call is durable by then
/// (`syncMeansDurable`). A group commit that tells a caller its fsync ran when the one that
/// ran began before the caller's change breaks it at once, not only when a power cut falls in
/// the instant after.
final class SyncWitness: DirectorySyncing {
    private let inner: DirectorySyncer
    private let disk: SimDisk
    /// What went wrong, in order: each a caller told durable whose change was not.
    private let broken = Mutex<[String]>([])

    init(inner: DirectorySyncer, disk: SimDisk) {
        self.inner = inner
        self.disk = disk
    }

    /// The first promise broken so far, if any.
    var firstBroken: String? { broken.withLock { $0.first } }

    func syncDirectory(of name: RelativePath, in directory: String) throws {
        try witness(name, in: directory) { try inner.syncDirectory(of: name, in: directory) }
    }

    /// Its promise is the entry `name` alone (the directory's other changes may wait): that entry,
    /// as it was when the caller asked, is durable when the call returns, unless it changed since.
    func syncOnce(of name: RelativePath, in directory: String) throws {
        let (parent, entry) = Self.split(name, in: directory)
        let asked = disk.entry(entry, in: parent)
        try inner.syncOnce(of: name, in: directory)
        guard let asked, disk.entry(entry, in: parent) == asked, disk.durableEntry(entry, in: parent) != asked else { return }
        let shown = String(decoding: parent, as: UTF8.self)
        broken.withLock { $0.append("syncOnce told \(name.logSafe) in \(shown) durable, but it is not") }
    }

    private func witness(_ name: RelativePath, in directory: String, _ sync: () throws -> Void) throws {
        let path = Self.split(name, in: directory).parent
        let mark = disk.durabilityMark(of: path)
        try sync()
        guard let mark, let change = disk.undurableChange(in: mark.directory, madeBy: mark.changes) else { return }
        let shown = String(decoding: path, as: UTF8.self)
        broken.withLock { $0.append("syncDirectory of \(name.logSafe) told \(shown) durable, but its change #\(change) (made before it asked) is not") }
    }

    /// The directory holding `name` inside `directory` (an absolute path), and `name`'s last component.
    private static func split(_ name: RelativePath, in directory: String) -> (parent: [UInt8], entry: [UInt8]) {
        var path = Array(directory.utf8)
        if let parent = name.parent { path += [UInt8(ascii: "/")] + parent.bytes }
        return (path, name.name.bytes)
    }
}

extension SimDisk {
    /// The directory `path` names and the number of entry changes made so far; nil if no directory is there.
    func durabilityMark(of path: [UInt8]) -> (directory: UInt64, changes: Int)? {
        state.withLock { state in
            guard let inode = try? state.locate(SimDiskState.components(absolute: path), followLast: true).inode,
                  state.nodes[inode]!.isDirectory else { return nil }
            return (inode, state.changesMade)
        }
    }

    /// The first change of `directory` not durable yet, if it was made by the mark `changes`.
    func undurableChange(in directory: UInt64, madeBy changes: Int) -> Int? {
        state.withLock { state in
            guard let first = state.firstUndurableChange[directory], first <= changes else { return nil }
            return first
        }
    }
}

extension SimDisk {
    /// What `entry` in the directory at `directory` names now; nil if nothing.
    func entry(_ entry: [UInt8], in directory: [UInt8]) -> UInt64? {
        state.withLock { state in
            guard let parent = try? state.locate(SimDiskState.components(absolute: directory), followLast: true).inode else { return nil }
            return state.nodes[parent]?.entries[entry]
        }
    }

    /// What `entry` in the directory at `directory` names on the durable disk; nil if nothing.
    func durableEntry(_ entry: [UInt8], in directory: [UInt8]) -> UInt64? {
        state.withLock { state in
            guard let parent = try? state.locate(SimDiskState.components(absolute: directory), followLast: true).inode else { return nil }
            return state.nodes[parent]?.durableEntries[entry]
        }
    }
}
