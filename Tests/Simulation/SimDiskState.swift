import Foundation
import UploaderSupport

/// Everything one simulated disk knows, as a value: the inodes (each with its volatile and
/// durable versions), the journal of metadata changes since the last commit, open descriptors,
/// and the crash control. `SimDisk` holds it behind a mutex; every change goes through the
/// few primitives here, so both power-cut models see every change.
struct SimDiskState: Sendable {
    static let root: UInt64 = 2
    static let device: UInt64 = 0x803

    let model: SimDisk.Model
    let now: @Sendable () -> Date
    var nodes: [UInt64: SimNode] = [:]
    private var nextInode: UInt64 = 12

    /// `journalled`: the metadata operations since the last commit, in order, each one a group
    /// of entry changes that the journal replays whole or not at all.
    var journal: [[SimEntryChange]] = []
    /// `noJournal` in the form of ext4 without a journal (else ext2): a file's fsync also makes
    /// durable the directory that holds its new entry, and that directory's own new entry in its
    /// parent, and so on up (`ext4_sync_parent`).
    var fileSyncPersistsNewEntry = false
    /// ext4's "new entry" state: an inode given a new name since its last fsync, to the
    /// directory that name is in (the form of ext4 without a journal only).
    var newEntries: [UInt64: UInt64] = [:]
    /// Directories whose entries may differ from their durable entries.
    var dirtyDirectories: Set<UInt64> = []
    /// Metadata operations made so far (`change`): a mark of "every change up to now".
    var changesMade = 0
    /// Each directory with entries not yet durable → the number (`changesMade`) of the first
    /// operation that changed it since they last were.
    var firstUndurableChange: [UInt64: Int] = [:]
    /// Inodes whose content may differ from their durable content.
    var dirtyContent: Set<UInt64> = []
    /// `journalled`: inodes with data written since their blocks were last allocated (ext4's
    /// delayed allocation). A journal commit does not carry their data, only their own fsync,
    /// sync(2), or a rename over another file (`auto_da_alloc`) does.
    var delayedData: Set<UInt64> = []
    /// Inodes whose writeback failed (fsync gave EIO): the kernel counts their pages clean, the
    /// disk kept the durable content; no later fsync or commit persists it, a power cut loses it.
    /// A new write makes them dirty again.
    var writebackLost: Set<UInt64> = []
    /// The faults drawn for the process's calls (`SimDisk+Faults.swift`); nil: none.
    var faults: (@Sendable (SimDisk.FaultSite) -> SimDisk.Fault)?
    var faultsDrawn = 0
    /// Told of each counted operation once it is done (`SimDisk.observeOperations`); nil: nobody.
    var operationObserver: OperationObserver?
    /// `code`: the errno the operation failed with, 0 when it succeeded.
    typealias OperationObserver = @Sendable (_ call: String, _ path: String, _ code: Int32) -> Void
    /// Hears each lock asked for (its file's path), before it is held.
    var lockObserver: (@Sendable (_ path: String) -> Void)?

    /// Open descriptors: fake numbers (from 1000 up, never reused) → inode.
    var openFiles: [Int32: UInt64] = [:]
    /// flock(2) locks: the descriptor holding each locked inode's lock, which its close lets go.
    var fileLocks: [UInt64: Int32] = [:]
    var nextDescriptor: Int32 = 1000
    /// How each open descriptor was opened, and where its next read(2) or write(2) lands.
    var descriptors: [Int32: SimOpenFile] = [:]
    /// Open listings (opendir): the entries still to hand out, by stream number.
    var directoryStreams: [UInt: [FileSystem.Entry]] = [:]
    var nextStream: UInt = 1

    var operations = 0
    var crashPoint: Int?
    var crashed = false
    /// Counted operations since the simulator last took them, as trace lines (`--replay` only).
    var operationLog: [String]?

    init(model: SimDisk.Model, now: @escaping @Sendable () -> Date) {
        self.model = model
        self.now = now
        nodes[Self.root] = SimNode(kind: .directory, parent: Self.root, content: SimContent(at: nanosNow()))
    }

    // MARK: The operation gate

    /// Called before every counted operation: refuses it (EIO) from the armed crash point on.
    mutating func beginOperation() throws(SimErrno) {
        if crashed { throw SimErrno(EIO) }
        if let crashPoint, operations >= crashPoint {
            crashed = true
            throw SimErrno(EIO)
        }
        operations += 1
    }

    /// Called before every read: a dead process reads nothing either.
    func beginRead() throws(SimErrno) {
        if crashed { throw SimErrno(EIO) }
    }

    /// The process is gone (kill -9 or power cut): its descriptors close and the crash is disarmed.
    mutating func endProcess() {
        openFiles = [:]
        fileLocks = [:]
        descriptors = [:]
        directoryStreams = [:]
        crashPoint = nil
        crashed = false
    }

    // MARK: Primitives (each change of the volatile state is one of these)

    func nanosNow() -> Int64 {
        let t = now().timeIntervalSince1970
        let seconds = t.rounded(.down)
        return Int64(seconds) * 1_000_000_000 + Int64(((t - seconds) * 1e9).rounded())
    }

    /// A new inode, empty, named by nothing yet. Its durable content is that empty state.
    mutating func allocate(_ kind: SimNode.Kind, parent: UInt64) -> UInt64 {
        let id = nextInode
        nextInode += 1
        nodes[id] = SimNode(kind: kind, parent: parent, content: SimContent(at: nanosNow()))
        return id
    }

    /// One metadata operation: applies its entry changes at once, and records them for the power cut.
    mutating func change(_ changes: [SimEntryChange]) {
        let stamp = nanosNow()
        changesMade += 1
        for change in changes {
            if firstUndurableChange[change.directory] == nil { firstUndurableChange[change.directory] = changesMade }
            if let old = nodes[change.directory]!.entries[change.name] { nodes[old]!.links -= 1 }
            if let new = change.inode {
                nodes[new]!.links += 1
                if nodes[new]!.isDirectory { nodes[new]!.parent = change.directory }
                if fileSyncPersistsNewEntry { newEntries[new] = change.directory }
            }
            nodes[change.directory]!.entries[change.name] = change.inode
            nodes[change.directory]!.content.mtimeNanos = stamp
            nodes[change.directory]!.content.ctimeNanos = stamp
            dirtyDirectories.insert(change.directory)
        }
        if model == .journalled { journal.append(changes) }
    }

    /// New data for a file (same inode); mtime and ctime move.
    mutating func setData(_ data: [UInt8], of inode: UInt64) {
        let stamp = nanosNow()
        nodes[inode]!.content.data = data
        nodes[inode]!.content.mtimeNanos = stamp
        nodes[inode]!.content.ctimeNanos = stamp
        dirtyContent.insert(inode)
        writebackLost.remove(inode)
        if model == .journalled { delayedData.insert(inode) }
    }

    /// futimens(2): the mtime set to `nanos`; ctime moves.
    mutating func setModificationTime(_ nanos: Int64, of inode: UInt64) {
        nodes[inode]!.content.mtimeNanos = nanos
        nodes[inode]!.content.ctimeNanos = nanosNow()
        dirtyContent.insert(inode)
    }

    /// A change of the inode itself (rename, link, unlink): ctime moves.
    mutating func touch(_ inode: UInt64) {
        nodes[inode]!.content.ctimeNanos = nanosNow()
        dirtyContent.insert(inode)
    }

    // MARK: Durability

    /// fsync of a file: in `noJournal` its content becomes durable (in ext4's form, with the
    /// directories holding its new entries); in `journalled` the whole journal commits.
    mutating func syncFile(_ inode: UInt64) {
        guard model == .noJournal else {
            delayedData.remove(inode)
            return commit()
        }
        var named = inode
        while let directory = newEntries.removeValue(forKey: named) {
            syncDirectory(directory)
            named = directory
        }
        dirtyContent.remove(inode)
        guard !writebackLost.contains(inode) else { return }
        nodes[inode]!.durableContent = nodes[inode]!.content
    }

    /// fsync failed with EIO: the inode's pages count as clean, its durable content stays.
    mutating func loseWriteback(of inode: UInt64) {
        dirtyContent.remove(inode)
        writebackLost.insert(inode)
    }

    /// fsync of a directory: in `noJournal` its entries (only its own) become durable; in `journalled` the journal commits.
    mutating func syncDirectory(_ directory: UInt64) {
        guard model == .noJournal else { return commit() }
        nodes[directory]!.durableEntries = nodes[directory]!.entries
        dirtyDirectories.remove(directory)
        firstUndurableChange[directory] = nil
    }

    /// A journal commit with data=ordered: every entry, and the content of every file whose
    /// data has its blocks (not `delayedData`), becomes durable.
    mutating func commit() {
        for directory in dirtyDirectories { nodes[directory]!.durableEntries = nodes[directory]!.entries }
        for inode in dirtyContent where !writebackLost.contains(inode) && !delayedData.contains(inode) {
            nodes[inode]!.durableContent = nodes[inode]!.content
        }
        dirtyDirectories = []
        firstUndurableChange = [:]
        dirtyContent = dirtyContent.intersection(delayedData)
        journal = []
    }

    /// sync(2): every file's data gets its blocks, then the journal commits: everything is durable.
    mutating func syncEverything() {
        delayedData = []
        commit()
    }

    /// `st_nlink`: the entries naming a file; for a directory 2 plus its subdirectories, as ext4 counts.
    func linkCount(_ inode: UInt64) -> Int {
        let node = nodes[inode]!
        guard node.isDirectory else { return node.links }
        return 2 + node.entries.values.filter { nodes[$0]!.isDirectory }.count
    }

    func status(_ inode: UInt64) -> FileSystem.Status {
        nodes[inode]!.status(inode: inode, device: Self.device, links: linkCount(inode))
    }
}
