@preconcurrency import Glibc
import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// The claimer opens each outbox entry once, with O_NOFOLLOW and O_NONBLOCK, and refuses
/// whatever is not a regular file; the descriptor it hands out is what gets uploaded.
@Suite struct ClaimerTests {
    final class Outbox {
        let dir: TemporaryDirectory
        let spool: Spool
        let claimer: Claimer
        let lines = LogLines()

        init() throws {
            dir = try TemporaryDirectory()
            spool = Spool(paths: SpoolPaths(root: dir.path + "/spool"))
            try spool.prepare()
            let logger = Logger(level: .debug, sink: { [lines] in lines.append($0) })
            claimer = Claimer(spool: spool, profileName: "t", digest: .sha256, mimeTypes: MimeTypes(byExtension: [:]),
                              lifecycle: FileLifecycle(spool: spool, logger: logger), logger: logger)
        }

        func path(_ name: String) -> String { spool.paths.outbox + "/" + name }

        func write(_ name: String, _ text: String) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path(name)))
        }
    }

    final class LogLines: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
    }

    private func refusal(_ outcome: Claimer.Outcome) -> String? {
        if case .refused(let reason) = outcome { return reason }
        return nil
    }

    private func read(_ fd: Int32, count: Int) -> String {
        var buffer = [UInt8](repeating: 0, count: count)
        let n = pread(fd, &buffer, count, 0)
        return String(decoding: buffer.prefix(max(0, n)), as: UTF8.self)
    }

    @Test func aSymlinkAtThePathIsRefusedWhateverItPointsTo() throws {
        let outbox = try Outbox()
        try outbox.write("real.txt", "real")
        let targets = ["/etc/shadow", outbox.path("real.txt"), "/etc", "/nonexistent/dangling"]
        for (i, target) in targets.enumerated() {
            #expect(symlink(target, outbox.path("link\(i)")) == 0)
            #expect(refusal(outbox.claimer.claim(RelativePath("link\(i)"), now: Date())) == "symlink, never followed", "\(target)")
            #expect(!FileManager.default.fileExists(atPath: outbox.path("link\(i).manifest.json")))
        }
    }

    @Test func theClaimedDescriptorStillReadsTheOriginalAfterThePathIsSwappedForASymlink() throws {
        let outbox = try Outbox()
        try outbox.write("victim.txt", "original bytes")
        try Data("SECRET".utf8).write(to: URL(fileURLWithPath: outbox.dir.path + "/secret"))
        guard case .ready(let file) = outbox.claimer.claim(RelativePath("victim.txt"), now: Date()) else {
            Issue.record("expected the file to be claimed"); return
        }
        #expect(rename(outbox.path("victim.txt"), outbox.dir.path + "/away.txt") == 0)
        #expect(symlink(outbox.dir.path + "/secret", outbox.path("victim.txt")) == 0)
        #expect(read(file.fd, count: 64) == "original bytes", "the upload reads the descriptor, not the path")
        #expect(file.manifest.sha256 == SHA256.hash(Array("original bytes".utf8)).hexString)
        // Claimed again, the path is now a symlink: refused, and the stale manifest is moved aside.
        try outbox.spool.writeManifest(file.manifest, for: file.path, in: .outbox)
        #expect(refusal(outbox.claimer.claim(RelativePath("victim.txt"), now: Date())) == "symlink, never followed")
        #expect(!FileManager.default.fileExists(atPath: outbox.path("victim.txt.manifest.json")))
        #expect(outbox.lines.all.contains { $0.contains("replaced by a symlink; manifest moved aside") })
    }

    /// Recursive outboxes: `sub/` swapped for a symlink to /etc-like places after `sub/x` was queued.
    @Test func aDirectoryOnThePathSwappedForASymlinkIsNeverWalked() throws {
        let outbox = try Outbox()
        let elsewhere = outbox.dir.path + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try Data("SECRET".utf8).write(to: URL(fileURLWithPath: elsewhere + "/x"))
        #expect(symlink(elsewhere, outbox.path("sub")) == 0)
        let outcome = outbox.claimer.claim(RelativePath("sub/x"), now: Date())
        if case .ready = outcome { Issue.record("a file behind a symlinked directory was claimed") }
        #expect(refusal(outcome)?.contains("Too many levels of symbolic links") == true || { if case .vanished = outcome { return true }; return false }(),
                "\(outcome)")
        #expect(throws: SystemError.self) { try FileSystem.openForReading(RelativePath("sub/x"), in: outbox.spool.paths.outbox) }
        #expect(throws: SystemError.self) { try FileSystem.status(RelativePath("sub/x"), in: outbox.spool.paths.outbox) }
        // A real subdirectory is fine.
        try FileManager.default.createDirectory(atPath: outbox.path("real"), withIntermediateDirectories: true)
        try outbox.write("real/y", "y")
        guard case .ready(let file) = outbox.claimer.claim(RelativePath("real/y"), now: Date()) else { Issue.record("real/y"); return }
        #expect(read(file.fd, count: 8) == "y")
    }

    @Test func aFifoIsRefusedAtOnceEvenWithNoWriter() throws {
        let outbox = try Outbox()
        #expect(mkfifo(outbox.path("pipe"), 0o644) == 0)
        let started = Date()
        #expect(refusal(outbox.claimer.claim(RelativePath("pipe"), now: Date())) == "FIFO, not a regular file")
        #expect(Date().timeIntervalSince(started) < 1)
    }

    @Test func aDirectoryIsRefusedAndAVanishedFileIsReportedAsSuch() throws {
        let outbox = try Outbox()
        try FileManager.default.createDirectory(atPath: outbox.path("sub"), withIntermediateDirectories: false)
        #expect(refusal(outbox.claimer.claim(RelativePath("sub"), now: Date())) == "directory (recursive = no)")
        guard case .vanished = outbox.claimer.claim(RelativePath("never-there"), now: Date()) else {
            Issue.record("expected .vanished"); return
        }
    }

    @Test func aNameWhoseSidecarWouldExceedTwoHundredFiftyFiveBytesIsRefusedUnopened() throws {
        let outbox = try Outbox()
        let name = String(repeating: "n", count: 242)  // + ".manifest.json" = 256 bytes
        try outbox.write(name, "x")
        #expect(refusal(outbox.claimer.claim(RelativePath(name), now: Date())) == "name too long: its sidecar manifest would exceed 255 bytes")
        let fits = String(repeating: "n", count: 241)
        try outbox.write(fits, "x")
        guard case .ready = outbox.claimer.claim(RelativePath(fits), now: Date()) else { Issue.record("241 bytes fit"); return }
    }
}
