@preconcurrency import Glibc
import Foundation
import Synchronization
import Testing
import UploaderDecisions
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool

/// A producer that writes to a file while the claimer hashes it has changed the file; the file is
/// not broken. It is claimed afresh, so that its record's digest, size and mtime (which make its
/// id, the upload's Idempotency-Key) all describe one version of it — never filed as failed, and
/// never the new bytes under the old version's id.
@Suite struct ClaimWhileHashedTests {
    /// The kernel's file system, except that reads of a claimed file first run `producer` (on the
    /// first read only, unless `everyRead`): the producer's write lands between the claimer's stat
    /// and its read.
    struct ChangingOnRead: KernelPassThrough {
        let base = LocalFileSystem()
        let producer: @Sendable () -> Void
        var everyRead = false
        let first = FirstTime()

        func read(fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String?) throws -> Int {
            if first.now() || everyRead { producer() }
            return try base.read(fd: fd, into: buffer, at: offset, path: path)
        }
    }

    final class FirstTime: Sendable {
        private let done = Atomic<Bool>(false)
        /// True on the first call only.
        func now() -> Bool { !done.exchange(true, ordering: .relaxed) }
    }

    /// A claimer over `fs` (logging to `log`) and the outbox path of `log.txt`, holding `content`.
    static func setUp(_ content: String, log: @escaping @Sendable (String) -> Void = { _ in },
                      fs: (String) -> any SpoolFileSystem) throws -> (Claimer, String, TemporaryDirectory) {
        let dir = try TemporaryDirectory()
        let paths = SpoolPaths(root: dir.path + "/spool")
        let victim = paths.outbox + "/log.txt"
        let spool = Spool(paths: paths, fs: fs(victim))
        try spool.prepare()
        let logger = Logger(level: .info, sink: log)
        let claimer = Claimer(spool: spool, profileName: "t", digest: .sha256, mimeTypes: MimeTypes(byExtension: [:]),
                              lifecycle: FileLifecycle(spool: spool, logger: logger), logger: logger)
        try Data(content.utf8).write(to: URL(fileURLWithPath: victim))
        try SameTickRewriteTests.setMtime(victim, Date(timeIntervalSince1970: 1_700_000_000))
        return (claimer, victim, dir)
    }

    /// Writes `content` over the start of `path` and moves its mtime on by `seconds`.
    static func rewrite(_ path: String, _ content: String, mtimeAfter seconds: Double) {
        let before = try? FileSystem.status(path: path)
        let fd = open(path, O_WRONLY)
        _ = Array(content.utf8).withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        Glibc.close(fd)
        try? SameTickRewriteTests.setMtime(path, (before?.mtime ?? Date()).addingTimeInterval(seconds))
    }

    @Test func aFileCutShortWhileHashedIsClaimedAfreshWithItsNewContent() throws {
        let (claimer, _, dir) = try Self.setUp("hello, world") { victim in
            ChangingOnRead(producer: { _ = truncate(victim, 5) })
        }
        defer { _ = dir }
        guard case .ready(let file) = claimer.claim(RelativePath("log.txt"), now: Date()) else {
            Issue.record("a file cut short while hashed was not claimed afresh")
            return
        }
        #expect(file.manifest.size == 5)
        #expect(file.manifest.sha256 == SHA256.hash(Array("hello".utf8)).hexString)
    }

    /// Seed 41780: rewritten in place (same size, later mtime) between the claim's stat and its
    /// read. The digest was of the new bytes, size and mtime of the old, and the id made of both;
    /// the upload then saw the new mtime and sent the same bytes again under a second id.
    @Test func aSameSizeRewriteWhileHashedIsClaimedAfreshAsOneVersion() throws {
        let (claimer, victim, dir) = try Self.setUp("frame-0001") { victim in
            ChangingOnRead(producer: { Self.rewrite(victim, "frame-0002", mtimeAfter: 1) })
        }
        defer { _ = dir }
        guard case .ready(let file) = claimer.claim(RelativePath("log.txt"), now: Date()) else {
            Issue.record("not claimed")
            return
        }
        let now = try FileSystem.status(path: victim)
        #expect(file.manifest.sha256 == SHA256.hash(Array("frame-0002".utf8)).hexString)
        #expect(file.manifest.mtime == now.mtimeText, "the record describes the version it hashed")
        #expect(file.status.mtimeNanos == now.mtimeNanos)
        // The id of this very version (device, inode, size, mtime, digest): the key the upload's
        // own change check will find again, so the bytes go out under one key only.
        #expect(file.manifest.id == ManifestID.derive(profile: "t", path: RelativePath("log.txt"), status: now,
                                                      sha256: SHA256.hash(Array("frame-0002".utf8)).hexString))
    }

    /// A producer that writes during every read does not keep the claimer busy for ever: after a
    /// few rounds the file is claimed as it is (its upload's own check then sees the change).
    @Test func aFileChangingUnderEveryReadIsClaimedAfterAFewRounds() throws {
        let lines = Mutex<[String]>([])
        let (claimer, _, dir) = try Self.setUp("tick-0", log: { line in lines.withLock { $0.append(line) } }) { victim in
            var fs = ChangingOnRead(producer: { Self.rewrite(victim, "tick-1", mtimeAfter: 1) })
            fs.everyRead = true
            return fs
        }
        defer { _ = dir }
        guard case .ready = claimer.claim(RelativePath("log.txt"), now: Date()) else {
            Issue.record("not claimed")
            return
        }
        let rounds = lines.withLock { $0 }.filter { $0.contains("file changed while it was hashed") }.count
        #expect(rounds == ClaimSetback.rounds, "claimed afresh \(rounds) times")
    }
}
