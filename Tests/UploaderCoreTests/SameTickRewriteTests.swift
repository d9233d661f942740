@preconcurrency import Glibc
import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool

/// A rewrite of the same size within one tick of the kernel's file clock leaves size and mtime
/// as they were (simulator seed 6569): for a file written just before its claim, only its bytes
/// can tell, so they are hashed again; an older file needs no second read.
@Suite struct SameTickRewriteTests {
    /// A spool whose outbox holds `cam.jpg` (`content`, last written `mtimeAgo` before `now`).
    struct Setup {
        let dir: TemporaryDirectory
        let spool: Spool
        let claimer: Claimer
        let name = RelativePath("cam.jpg")
        let path: String

        init(_ content: String, mtimeAgo: TimeInterval, now: Date) throws {
            dir = try TemporaryDirectory()
            let paths = SpoolPaths(root: dir.path + "/spool")
            spool = Spool(paths: paths)
            try spool.prepare()
            let logger = Logger(level: .error, sink: { _ in })
            claimer = Claimer(spool: spool, profileName: "t", digest: .sha256, mimeTypes: MimeTypes(byExtension: [:]),
                              lifecycle: FileLifecycle(spool: spool, logger: logger), logger: logger)
            path = paths.outbox + "/cam.jpg"
            try Data(content.utf8).write(to: URL(fileURLWithPath: path))
            try SameTickRewriteTests.setMtime(path, now.addingTimeInterval(-mtimeAgo))
        }

        func claim(now: Date) throws -> ClaimedFile {
            guard case .ready(let file) = claimer.claim(name, now: now) else { throw HarnessFailure("not claimed") }
            return file
        }
    }

    static func claim(_ content: String, mtimeAgo: TimeInterval) throws -> (ClaimedFile, String, TemporaryDirectory) {
        let now = Date()
        let setup = try Setup(content, mtimeAgo: mtimeAgo, now: now)
        return (try setup.claim(now: now), setup.path, setup.dir)
    }

    /// Rewrites `path` in place (same size) and puts its mtime back: what one clock tick looks like.
    static func rewriteWithinTheSameTick(_ path: String, _ content: String) throws {
        let before = try FileSystem.status(path: path)
        let fd = open(path, O_WRONLY)
        #expect(fd >= 0)
        _ = Array(content.utf8).withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        close(fd)
        try setMtime(path, nanos: before.mtimeNanos)
        #expect(try FileSystem.status(path: path).mtimeNanos == before.mtimeNanos)
    }

    static func setMtime(_ path: String, _ date: Date) throws {
        try setMtime(path, nanos: Int64((date.timeIntervalSince1970 * 1e9).rounded(.down)))
    }

    /// Exactly `nanos` since the epoch: a `Date` (a Double of seconds) cannot carry every
    /// nanosecond of a kernel time stamp back.
    static func setMtime(_ path: String, nanos: Int64) throws {
        let spec = timespec(tv_sec: Int(nanos / 1_000_000_000), tv_nsec: Int(nanos % 1_000_000_000))
        var times = [spec, spec]
        guard utimensat(AT_FDCWD, path, &times, 0) == 0 else { throw HarnessFailure("utimensat \(path)") }
    }

    struct HarnessFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    @Test func aFileWrittenJustBeforeItsClaimAndRewrittenInTheSameTickCountsAsChanged() throws {
        let (file, path, dir) = try Self.claim("frame-0001", mtimeAgo: 0.001)
        defer { _ = dir }
        #expect(file.writtenJustBefore)
        #expect(file.contentChanged() == nil, "unchanged so far")
        try Self.rewriteWithinTheSameTick(path, "frame-0002")
        #expect(file.contentChanged() != nil, "same size, same mtime, other bytes")
    }

    /// Seed 30821: the first claim's record was kept (its upload found the destination down) and
    /// the file rewritten in the tick of its claim; the next claim must not trust size and mtime.
    @Test(arguments: [(0.001, true), (5.0, false)])
    func aRecordHashedWithinATickOfTheWriteIsHashedAgainAtTheNextClaim(mtimeAgo: Double, hashedAgain: Bool) throws {
        let now = Date()
        let setup = try Setup("frame-0001", mtimeAgo: mtimeAgo, now: now)
        let first = try setup.claim(now: now)
        try setup.spool.writeManifest(first.manifest, for: setup.name, in: .outbox)
        try Self.rewriteWithinTheSameTick(setup.path, "frame-0002")
        let second = try setup.claim(now: now.addingTimeInterval(30))
        let newHash = SHA256.hash(Array("frame-0002".utf8)).hexString
        if hashedAgain {
            #expect(second.manifest.sha256 == newHash, "the bytes sent are the bytes hashed")
            #expect(second.manifest.id != first.manifest.id, "other content, other key")
        } else {
            // Hashed long after its last write: a rewrite would have moved the mtime. (The rewrite
            // here is one no clock allows; it shows the record is reused, not read again.)
            #expect(second.manifest.id == first.manifest.id && second.manifest.sha256 == first.manifest.sha256)
        }
    }

    @Test func aFileWrittenLongBeforeItsClaimIsNotReadAgain() throws {
        let (file, _, dir) = try Self.claim("frame-0001", mtimeAgo: 5)
        defer { _ = dir }
        #expect(!file.writtenJustBefore, "any later write would move its mtime")
        #expect(file.contentChanged() == nil)
    }
}
