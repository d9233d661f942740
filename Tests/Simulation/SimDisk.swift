import Foundation
import Synchronization
import UploaderSupport

/// A model of one file system that can lose power, standing in for the kernel behind
/// `SpoolFileSystem`, so the simulator can run the real spool code, crash it at any operation,
/// cut the power, and run the real recovery on what survived.
///
/// Every call applies at once to a volatile view (what the kernel has); a process crash
/// (`killProcess`) keeps that view; a power cut (`powerCut`) keeps what the `Model` allows of
/// it, chosen by the simulator's random generator. The simulator drives one disk from one
/// thread at a time; the state still sits behind a `Mutex`, so the disk is `Sendable` as the
/// protocol asks without any promise the compiler cannot check.
final class SimDisk: Sendable {
    /// Which power-cut model: docs/architecture.md, "The disk model of the simulator".
    enum Model: String, CaseIterable, Sendable {
        /// ext4, data=ordered: metadata operations persist in order, any fsync commits them all.
        case journalled
        /// ext2, or ext4 without a journal (`fileSyncPersistsNewEntry`): each directory entry
        /// persists on its own until its directory is fsynced.
        case noJournal
    }

    let model: Model
    let state: Mutex<SimDiskState>
    /// The records the simulator's checks have decoded, by their bytes.
    let manifestMemo = ManifestMemo()

    /// An empty disk: only `/`. `now` stamps mtime and ctime.
    init(model: Model, now: @escaping @Sendable () -> Date) {
        self.model = model
        self.state = Mutex(SimDiskState(model: model, now: now))
    }

    // MARK: Gates

    /// One counted operation (a call that changes the disk or its durability): refused with
    /// EIO from the armed crash point on. `call` and `path` name it in the error.
    func operation<R: Sendable>(_ call: String, _ path: @autoclosure () -> String,
                                _ body: (inout SimDiskState) throws -> R) throws -> R {
        try gate(call, path(), counted: true, body)
    }

    /// A read: not counted (a crash before a read leaves what a crash at the next operation
    /// leaves), but refused with EIO once the process is dead.
    func reading<R: Sendable>(_ call: String, _ path: @autoclosure () -> String,
                              _ body: (inout SimDiskState) throws -> R) throws -> R {
        try gate(call, path(), counted: false, body)
    }

    private func gate<R: Sendable>(_ call: String, _ path: @autoclosure () -> String, counted: Bool,
                                   _ body: (inout SimDiskState) throws -> R) throws -> R {
        var observer: SimDiskState.OperationObserver?
        do {
            let result = try state.withLock { state in
                observer = counted ? state.operationObserver : nil
                if counted, state.operationLog != nil {
                    state.operationLog!.append("  disk \(call) \(path())\(state.crashed || state.crashPoint.map { state.operations >= $0 } == true ? " (refused: crashed)" : "")")
                }
                if counted { try state.beginOperation() } else { try state.beginRead() }
                do {
                    return try body(&state)
                } catch let error as SimErrno where counted && state.operationLog != nil {
                    state.operationLog!.append("    → \(String(cString: strerror(error.code)))")
                    throw error
                }
            }
            observer?(call, path(), 0)
            return result
        } catch let error as SimErrno {
            observer?(call, path(), error.code)
            throw SystemError(call, path: path(), code: Errno(rawValue: error.code))
        }
    }

    /// Starts keeping every counted operation as a trace line (for `--replay`).
    func logOperations() { state.withLock { $0.operationLog = [] } }

    /// The operations logged since the last call.
    func takeOperationLog() -> [String] {
        state.withLock { state in
            defer { if state.operationLog != nil { state.operationLog = [] } }
            return state.operationLog ?? []
        }
    }

    // MARK: Crash control

    /// Operations performed so far, the code's and the producer's; a refused one does not count.
    var operations: Int { state.withLock { $0.operations } }

    /// Arms a crash: the operation attempted while `operations == k`, and every one after it
    /// (reads too), fails with EIO and changes nothing — the process is dead.
    func crash(atOperation k: Int) {
        state.withLock {
            $0.crashPoint = k
            $0.crashed = false
        }
    }

    /// The armed crash is taken back (the simulator's process view keeps the process dead itself).
    func disarmCrash() {
        state.withLock {
            $0.crashPoint = nil
            $0.crashed = false
        }
    }

    /// `noJournal` in the form of ext4 without a journal, not ext2: a file's fsync also makes
    /// its new entries durable (`SimDiskState.fileSyncPersistsNewEntry`).
    var fileSyncPersistsNewEntry: Bool {
        get { state.withLock { $0.fileSyncPersistsNewEntry } }
        set { state.withLock { $0.fileSyncPersistsNewEntry = newValue && $0.model == .noJournal } }
    }

    /// True once the armed crash took effect (an operation was refused).
    var crashed: Bool { state.withLock { $0.crashed } }

    /// kill -9 took effect: the kernel keeps everything; the descriptors close; the crash is disarmed.
    func killProcess() {
        state.withLock { $0.endProcess() }
    }

    /// The power went: the disk keeps one state the model allows (choices drawn from `rng`),
    /// which becomes durable; the descriptors close; the crash is disarmed.
    func powerCut(_ rng: inout some RandomNumberGenerator) {
        state.withLock { state in
            state.losePower(using: &rng)
            state.endProcess()
        }
    }

    /// sync(2): everything becomes durable. An operation. For the driver's set-up, or for the
    /// write-back a real kernel does on its own within seconds (the model never does).
    func syncAll() throws {
        try operation("sync", "/") { $0.syncEverything() }
    }

    // MARK: Inspection (volatile view; never counted, never refused)

    /// The content of the regular file at `path` (no symlink followed), nil if there is none.
    func contents(_ path: String) -> [UInt8]? {
        state.withLock { state in
            guard let inode = try? state.locate(SimDiskState.components(absolute: Array(path.utf8)), followLast: false).inode,
                  state.nodes[inode]!.kind == .regular else { return nil }
            return state.nodes[inode]!.content.data
        }
    }

    /// The entry names in `directory`, sorted by their bytes (invalid UTF-8 shows as U+FFFD); [] if absent.
    func names(in directory: String) -> [String] {
        state.withLock { state in
            (try? state.list(SimDiskState.components(absolute: Array(directory.utf8))))?.map(\.name.display) ?? []
        }
    }

    /// The regular files directly in `directory`, name and data, in no order (one look for a check
    /// that reads them all).
    func regularFiles(in directory: String) -> [(name: [UInt8], data: [UInt8])] {
        state.withLock { $0.regularFiles(in: SimDiskState.components(absolute: Array(directory.utf8))) }
    }

    func exists(path: String) -> Bool { inode(path) != nil }

    /// Whether `path` names a directory (lstat).
    func isDirectory(_ path: String) -> Bool {
        state.withLock { state in
            guard let inode = try? state.locate(SimDiskState.components(absolute: Array(path.utf8)), followLast: false).inode else { return false }
            return state.nodes[inode]!.isDirectory
        }
    }

    /// The inode `path` names (lstat), nil if none.
    func inode(_ path: String) -> UInt64? {
        state.withLock { state in
            try? state.locate(SimDiskState.components(absolute: Array(path.utf8)), followLast: false).inode
        }
    }
}
