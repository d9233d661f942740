@preconcurrency import Glibc
import Foundation
import Synchronization
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool

/// A producer that cuts a file short while the claimer hashes it has changed the file; the file
/// is not broken. It must be claimed afresh with its new content, never filed as failed.
@Suite struct ClaimShrinkTests {
    /// The kernel's file system, except that the first read of a claimed file first truncates it
    /// to `keep` bytes: the producer's write lands exactly between the claimer's stat and its read.
    struct ShrinkingOnFirstRead: SpoolFileSystem {
        let base = LocalFileSystem()
        let victim: String
        let keep: Int64
        let first = FirstTime()

        func read(fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String?) throws -> Int {
            if first.now() { _ = truncate(victim, off_t(keep)) }
            return try base.read(fd: fd, into: buffer, at: offset, path: path)
        }

        func status(_ path: RelativePath, in directory: String) throws -> FileSystem.Status { try base.status(path, in: directory) }
        func status(fd: Int32, path: String) throws -> FileSystem.Status { try base.status(fd: fd, path: path) }
        func exists(_ path: RelativePath, in directory: String) -> Bool { base.exists(path, in: directory) }
        func openForReading(_ path: RelativePath, in directory: String) throws -> Int32 { try base.openForReading(path, in: directory) }
        func close(_ fd: Int32) { base.close(fd) }
        func readAll(_ path: RelativePath, in directory: String) throws -> [UInt8] { try base.readAll(path, in: directory) }
        func createFile(_ data: [UInt8], named name: RelativePath, in directory: String, sync: Bool) throws {
            try base.createFile(data, named: name, in: directory, sync: sync)
        }
        func rename(_ from: RelativePath, in fromDir: String, to: RelativePath, in toDir: String, replace: Bool) throws {
            try base.rename(from, in: fromDir, to: to, in: toDir, replace: replace)
        }
        func link(_ existing: RelativePath, in fromDir: String, to new: RelativePath, in toDir: String) throws {
            try base.link(existing, in: fromDir, to: new, in: toDir)
        }
        func unlink(_ path: RelativePath, in directory: String) throws { try base.unlink(path, in: directory) }
        func syncDirectory(of name: RelativePath, in directory: String) throws { try base.syncDirectory(of: name, in: directory) }
        func makeDirectories(_ path: String) throws { try base.makeDirectories(path) }
        func makeParents(of path: RelativePath, in directory: String) throws { try base.makeParents(of: path, in: directory) }
        func list(_ path: RelativePath, in directory: String) throws -> [FileSystem.Entry] { try base.list(path, in: directory) }
    }

    final class FirstTime: Sendable {
        private let done = Atomic<Bool>(false)
        /// True on the first call only.
        func now() -> Bool { !done.exchange(true, ordering: .relaxed) }
    }

    @Test func aFileCutShortWhileHashedIsClaimedAfreshWithItsNewContent() throws {
        let dir = try TemporaryDirectory()
        let paths = SpoolPaths(root: dir.path + "/spool")
        let victim = paths.outbox + "/log.txt"
        let fs = ShrinkingOnFirstRead(victim: victim, keep: 5)
        let spool = Spool(paths: paths, fs: fs)
        try spool.prepare()
        let logger = Logger(level: .error, sink: { _ in })
        let claimer = Claimer(spool: spool, profileName: "t", digest: .sha256, mimeTypes: MimeTypes(byExtension: [:]),
                              lifecycle: FileLifecycle(spool: spool, logger: logger), logger: logger)
        try Data("hello, world".utf8).write(to: URL(fileURLWithPath: victim))

        guard case .ready(let file) = claimer.claim(RelativePath("log.txt"), now: Date()) else {
            Issue.record("a file cut short while hashed was not claimed afresh")
            return
        }
        #expect(file.manifest.size == 5)
        #expect(file.manifest.sha256 == SHA256.hash(Array("hello".utf8)).hexString)
    }
}
