@preconcurrency import Glibc
import Foundation
import Synchronization
import XCTest
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool

/// `uploader retry` while the daemon moves the same file into or out of retry/: the retry process
/// waits for the daemon's move (`<spool>/.retry.lock`), so the file is neither lost nor brought
/// back twice. The daemon's move is held at one step by its file system; the real binary runs the
/// retry; the kernel's lock table (/proc/locks) says when it waits.
final class RetryMoveLockTests: XCTestCase {
    private let bytes = Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    /// The daemon's settle into retry/ is held after both links into retry/, before its outbox names go.
    func testRetryWaitsForTheDaemonsMoveIntoRetry() throws {
        let fx = try SpoolFixture(url: "http://127.0.0.1:9/{name}")
        let held = HeldLinkFileSystem(holdAfterLinkInto: fx.retry, manifest: true)
        let lifecycle = FileLifecycle(spool: Spool(paths: SpoolPaths(root: fx.spool), fs: held), logger: Logger(level: .error))
        let path = RelativePath("f.bin")
        let manifest = try plantUploaded(path, fx, lifecycle)
        var final = manifest
        final.state = .retry
        final.nextAttemptAt = Timestamp.format(Date(timeIntervalSinceNow: 3600))

        let record = final
        let daemon = DaemonMove { try lifecycle.finish(path, manifest: record, to: .retry) }
        try held.waitUntilHeld()
        let retry = try fx.binary.start(["retry", "--all", "--config", fx.config], outputDirectory: fx.tmp.path("."))
        try assertWaitsOnTheLock(retry, fx, while: ["f.bin", "f.bin.manifest.json"], in: fx.retry)
        held.release()
        XCTAssertEqual(try daemon.result(), "f.bin")
        let result = try retry.waitForExit(timeout: 30)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        try assertQueuedOnce(path, fx)
    }

    /// The daemon's own due move back is held after its manifest's link into the outbox; `uploader
    /// retry` of the same file waits, then finds nothing left to do: one name in the outbox, no `f.bin.2`.
    func testRetryWaitsForTheDaemonsDueMoveBack() throws {
        let fx = try SpoolFixture(url: "http://127.0.0.1:9/{name}")
        let plain = FileLifecycle(spool: Spool(paths: SpoolPaths(root: fx.spool)), logger: Logger(level: .error))
        let path = RelativePath("f.bin")
        var final = try plantUploaded(path, fx, plain)
        final.state = .retry
        final.nextAttemptAt = Timestamp.format(Date(timeIntervalSinceNow: -1))
        try plain.finish(path, manifest: final, to: .retry)

        let held = HeldLinkFileSystem(holdAfterLinkInto: fx.outbox, manifest: true)
        let lifecycle = FileLifecycle(spool: Spool(paths: SpoolPaths(root: fx.spool), fs: held), logger: Logger(level: .error))
        let daemon = DaemonMove { try lifecycle.moveBack(fromRetry: path, resetBackoff: false, locked: .shared) }
        try held.waitUntilHeld()
        let retry = try fx.binary.start(["retry", "f.bin", "--config", fx.config], outputDirectory: fx.tmp.path("."))
        try assertWaitsOnTheLock(retry, fx, while: ["f.bin", "f.bin.manifest.json"], in: fx.retry)
        held.release()
        XCTAssertEqual(try daemon.result(), "f.bin")
        let result = try retry.waitForExit(timeout: 30)
        // The file was moved back by the daemon meanwhile: the retry finds no record of it (exit 1, one line).
        XCTAssertEqual(result.exitCode, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("cannot move f.bin back to the outbox"), result.stderr)
        try assertQueuedOnce(path, fx)
    }

    /// A lock file that cannot be opened (a symlink stands in its place, never followed): `uploader
    /// retry` stops with one line naming it (exit 1) and moves none of the profile's files, and the
    /// daemon's move into retry/ leaves its file in the outbox; nothing moves, nothing is lost.
    func testUnopenableLockFileMovesNothing() throws {
        let fx = try SpoolFixture(url: "http://127.0.0.1:9/{name}")
        let lifecycle = FileLifecycle(spool: Spool(paths: SpoolPaths(root: fx.spool)), logger: Logger(level: .error))
        for (name, id) in [("f.bin", "m-1"), ("h.bin", "m-2")] {
            var final = try plantUploaded(RelativePath(name), fx, lifecycle, id: id)
            final.state = .retry
            try lifecycle.finish(RelativePath(name), manifest: final, to: .retry)
        }
        let inRetry = ["f.bin", "f.bin.manifest.json", "h.bin", "h.bin.manifest.json"]
        try FileManager.default.removeItem(atPath: fx.spool + "/.retry.lock")
        try FileManager.default.createSymbolicLink(atPath: fx.spool + "/.retry.lock", withDestinationPath: "elsewhere")

        let result = try fx.run(["retry", "--all"])
        XCTAssertEqual(result.exitCode, 1, result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains(fx.spool + "/.retry.lock"), result.stderr)
        XCTAssertTrue(result.stderr.contains("nothing moved back"), result.stderr)
        XCTAssertEqual(fx.names(in: fx.retry), inRetry)

        var other = try plantUploaded(RelativePath("g.bin"), fx, lifecycle, id: "m-3")
        other.state = .retry
        XCTAssertThrowsError(try lifecycle.finish(RelativePath("g.bin"), manifest: other, to: .retry)) { error in
            XCTAssertTrue(error is RetryMoveLock.Unavailable, "\(error)")
        }
        XCTAssertEqual(try sha256(ofFile: fx.outbox + "/g.bin"), sha256(of: bytes))
        XCTAssertEqual(fx.names(in: fx.retry), inRetry)
    }

    /// A file in the outbox with an `uploading` record, as a claim and its attempt leave it.
    private func plantUploaded(_ path: RelativePath, _ fx: SpoolFixture, _ lifecycle: FileLifecycle, id: String = "m-1") throws -> Manifest {
        _ = try fx.tmp.mkdir("spool/retry")
        _ = try fx.tmp.mkdir("spool/sent")
        try fx.drop(path.display, bytes)
        let status = try FileSystem.status(path, in: fx.outbox)
        var manifest = Manifest(id: id, profile: fx.profile, path: path, size: status.size, mtime: status.mtimeText,
                                sha256: sha256(of: bytes), contentType: "application/octet-stream", state: .uploading,
                                createdAt: Timestamp.format(Date()))
        manifest.attempts.append(Manifest.Attempt(startedAt: Timestamp.format(Date()), endedAt: Timestamp.format(Date()), httpStatus: 503))
        try lifecycle.spool.writeManifest(manifest, for: path, in: .outbox, syncDirectory: true)
        return manifest
    }

    /// The retry process is blocked on the lock (the kernel lists its request as waiting) and has
    /// moved nothing: `names` are still in `directory`, nothing of them in the outbox but what was.
    private func assertWaitsOnTheLock(_ retry: RunningProcess, _ fx: SpoolFixture, while names: [String], in directory: String,
                                      file: StaticString = #filePath, line: UInt = #line) throws {
        let outboxBefore = fx.names(in: fx.outbox)
        let lockFile = fx.spool + "/.retry.lock"
        try waitUntil(timeout: 20, "the retry process to wait on \(lockFile), or to end") {
            try !retry.isRunning || waitingExclusiveLocks(on: lockFile) > 0
        }
        XCTAssertTrue(retry.isRunning, "the retry process ran through the daemon's move: \(retry.stdoutText()) \(retry.stderrText())",
                      file: file, line: line)
        for name in names {
            XCTAssertTrue(FileManager.default.fileExists(atPath: directory + "/" + name), "\(name) left \(directory)", file: file, line: line)
        }
        XCTAssertEqual(fx.names(in: fx.outbox), outboxBefore, "the outbox changed while the daemon's move was held", file: file, line: line)
    }

    /// The file is in the outbox once, with its original bytes and a `queued` record; retry/ is empty.
    private func assertQueuedOnce(_ path: RelativePath, _ fx: SpoolFixture, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(fx.names(in: fx.outbox), ["f.bin", "f.bin.manifest.json"], file: file, line: line)
        XCTAssertEqual(fx.names(in: fx.retry), [], file: file, line: line)
        XCTAssertEqual(fx.names(in: fx.sent), [], file: file, line: line)
        XCTAssertEqual(try sha256(ofFile: fx.outbox + "/f.bin"), sha256(of: bytes), file: file, line: line)
        XCTAssertEqual(try fx.manifest("f.bin", in: fx.outbox).state, .queued, file: file, line: line)
    }
}

/// A daemon's move run on a thread of its own; `result` waits for it and says where the file went.
private final class DaemonMove: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let outcome = Mutex<Result<String, any Error>?>(nil)

    init(_ move: @escaping @Sendable () throws -> RelativePath) {
        Thread { [self] in
            outcome.withLock { $0 = Result { try move().display } }
            done.signal()
        }.start()
    }

    func result() throws -> String {
        guard done.wait(timeout: .now() + 30) == .success else { throw HarnessError("the daemon's move did not end") }
        return try outcome.withLock { $0! }.get()
    }
}

/// How many lock requests on `path` the kernel lists as waiting for a write lock (/proc/locks:
/// a `->` line naming the file's inode).
private func waitingExclusiveLocks(on path: String) throws -> Int {
    var st = stat()
    guard stat(path, &st) == 0 else { return 0 }
    let table = try String(contentsOfFile: "/proc/locks", encoding: .utf8)
    return table.split(separator: "\n").filter { entry in
        let fields = entry.split(separator: " ")
        guard fields.contains("->"), fields.contains("WRITE") else { return false }
        return fields.contains { $0.split(separator: ":").count == 3 && $0.split(separator: ":").last == Substring("\(st.st_ino)") }
    }.count
}

/// The kernel's file system, except that the first link of a file (or of a manifest, `manifest`)
/// into `directory` stops, once made, until the test lets it go: a daemon's move held between two
/// of its steps.
private final class HeldLinkFileSystem: SpoolFileSystem, Sendable {
    private let base = LocalFileSystem()
    private let directory: String
    private let manifest: Bool
    private let armed = Mutex(true)
    private let reached = DispatchSemaphore(value: 0)
    private let go = DispatchSemaphore(value: 0)

    init(holdAfterLinkInto directory: String, manifest: Bool) {
        self.directory = directory
        self.manifest = manifest
    }

    func waitUntilHeld() throws {
        guard reached.wait(timeout: .now() + 20) == .success else { throw HarnessError("the move never reached its link into \(directory)") }
    }

    func release() { go.signal() }

    func link(_ existing: RelativePath, in fromDir: String, to new: RelativePath, in toDir: String) throws {
        try base.link(existing, in: fromDir, to: new, in: toDir)
        guard toDir == directory, Spool.isManifestName(new) == manifest, armed.withLock({ let was = $0; $0 = false; return was }) else { return }
        reached.signal()
        go.wait()
    }

    func status(_ path: RelativePath, in directory: String) throws -> FileSystem.Status { try base.status(path, in: directory) }
    func status(fd: Int32, path: String) throws -> FileSystem.Status { try base.status(fd: fd, path: path) }
    func exists(_ path: RelativePath, in directory: String) -> Bool { base.exists(path, in: directory) }
    func openForReading(_ path: RelativePath, in directory: String) throws -> Int32 { try base.openForReading(path, in: directory) }
    func close(_ fd: Int32) { base.close(fd) }
    func read(fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String?) throws -> Int {
        try base.read(fd: fd, into: buffer, at: offset, path: path)
    }
    func readAll(_ path: RelativePath, in directory: String) throws -> [UInt8] { try base.readAll(path, in: directory) }
    func createFile(_ data: [UInt8], named name: RelativePath, in directory: String, sync: Bool) throws {
        try base.createFile(data, named: name, in: directory, sync: sync)
    }
    func rename(_ from: RelativePath, in fromDir: String, to: RelativePath, in toDir: String, replace: Bool) throws {
        try base.rename(from, in: fromDir, to: to, in: toDir, replace: replace)
    }
    func unlink(_ path: RelativePath, in directory: String) throws { try base.unlink(path, in: directory) }
    func mayLink(_ path: RelativePath, in directory: String, status: FileSystem.Status) -> Bool {
        base.mayLink(path, in: directory, status: status)
    }
    func copyFile(from fd: Int32, status: FileSystem.Status, to name: RelativePath, in directory: String) throws {
        try base.copyFile(from: fd, status: status, to: name, in: directory)
    }
    func mayWriteDirectory(of path: RelativePath, in directory: String) -> Bool { base.mayWriteDirectory(of: path, in: directory) }
    func exchange(_ a: RelativePath, in aDir: String, with b: RelativePath, in bDir: String) throws {
        try base.exchange(a, in: aDir, with: b, in: bDir)
    }
    func syncDirectory(of name: RelativePath, in directory: String) throws { try base.syncDirectory(of: name, in: directory) }
    func makeDirectories(_ path: String) throws { try base.makeDirectories(path) }
    func makeParents(of path: RelativePath, in directory: String) throws { try base.makeParents(of: path, in: directory) }
    func list(_ path: RelativePath, in directory: String) throws -> [FileSystem.Entry] { try base.list(path, in: directory) }
    func append(_ data: [UInt8], to name: RelativePath, in directory: String) throws { try base.append(data, to: name, in: directory) }
    func withLock<T>(_ name: RelativePath, in directory: String, exclusive: Bool, _ body: () throws -> T) throws -> T {
        try base.withLock(name, in: directory, exclusive: exclusive, body)
    }
    func takeProcessLock(_ name: RelativePath, in directory: String, stamp: [UInt8]) throws -> ProcessLockTaking {
        try base.takeProcessLock(name, in: directory, stamp: stamp)
    }
}
