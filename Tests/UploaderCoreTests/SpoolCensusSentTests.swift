import Foundation
import Synchronization
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool

/// `status` never reads sent/: `sent_24h` comes from the sent ledger, so a spool keeping many
/// sent files counts as fast as an empty one — and files put into sent/ by hand are not counted.
@Suite struct SpoolCensusSentTests {
    /// The kernel's file system, noting every call that names a path in `watched`.
    struct Watching: KernelPassThrough {
        let base = LocalFileSystem()
        let watched: String
        let seen = Seen()

        private func note(_ call: String, _ directory: String, _ path: RelativePath? = nil) {
            let full = path.map { $0.displayed(in: directory) } ?? directory
            if full == watched || full.hasPrefix(watched + "/") { seen.calls.withLock { $0.append("\(call) \(full)") } }
        }

        func status(_ path: RelativePath, in directory: String) throws -> FileSystem.Status {
            note("lstat", directory, path)
            return try base.status(path, in: directory)
        }
        func exists(_ path: RelativePath, in directory: String) -> Bool {
            note("exists", directory, path)
            return base.exists(path, in: directory)
        }
        func openForReading(_ path: RelativePath, in directory: String) throws -> Int32 {
            note("open", directory, path)
            return try base.openForReading(path, in: directory)
        }
        func readAll(_ path: RelativePath, in directory: String) throws -> [UInt8] {
            note("read", directory, path)
            return try base.readAll(path, in: directory)
        }
        func copyFile(from fd: Int32, status: FileSystem.Status, to name: RelativePath, in directory: String) throws {
            note("copy", directory, name)
            try base.copyFile(from: fd, status: status, to: name, in: directory)
        }
        func exchange(_ a: RelativePath, in aDir: String, with b: RelativePath, in bDir: String) throws {
            note("exchange", aDir, a)
            try base.exchange(a, in: aDir, with: b, in: bDir)
        }
        func list(_ path: RelativePath, in directory: String) throws -> [FileSystem.Entry] {
            note("list", directory, path.bytes.isEmpty ? nil : path)
            return try base.list(path, in: directory)
        }
        func forEachEntry(_ path: RelativePath, in directory: String, _ body: (FileSystem.Entry) throws -> Void) throws {
            note("readdir", directory, path.bytes.isEmpty ? nil : path)
            try base.forEachEntry(path, in: directory, body)
        }
    }

    /// The calls `Watching` noted.
    final class Seen: Sendable {
        let calls = Mutex<[String]>([])
    }

    @Test func theCensusCountsSentFromTheLedgerAndNeverTouchesSent() throws {
        let dir = try TemporaryDirectory()
        let paths = SpoolPaths(root: dir.path + "/spool")
        let fs = Watching(watched: paths.sent)
        let spool = Spool(paths: paths, fs: fs)
        try spool.prepare()
        // Files placed in sent/ by hand, with manifests as a delivery writes them: not deliveries.
        for i in 0..<200 {
            var m = SentLedgerTests.delivery("hand\(i).bin", bytes: 3, ago: 60)
            m.storedAs = "sent/hand\(i).bin"
            try Data("abc".utf8).write(to: URL(fileURLWithPath: paths.sent + "/hand\(i).bin"))
            try Data(try m.encodedLine()).write(to: URL(fileURLWithPath: paths.sent + "/hand\(i).bin.manifest.json"))
        }
        spool.sentLedger.record([SentLedgerTests.delivery("x", bytes: 7, ago: 60), SentLedgerTests.delivery("y", bytes: 9, ago: 120)],
                                logger: SentLedgerTests.quiet)
        let census = SpoolCensus.take(spool, ignore: IgnoreRules(patterns: []), now: SentLedgerTests.now) { error in
            Issue.record("unlistable: \(error)")
        }
        #expect(census.sent24h == SpoolCensus.Tally(files: 2, bytes: 16))
        #expect(fs.seen.calls.withLock { $0 } == [], "status touched sent/")
    }
}
