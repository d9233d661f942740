@preconcurrency import Glibc
import Foundation
import Synchronization
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
import UploaderDecisions
@testable import UploaderTransfer
@testable import UploaderCore

/// A spool call that fails other than with ENOENT is said, with what and where, and nothing that
/// cannot be looked at is taken for absent: no record quarantined, no producer's file removed,
/// no "removed" line for what is still there.
@Suite struct SpoolFailureTests {
    /// The kernel's file system, but the calls `fails` picks throw that errno.
    struct Failing: KernelPassThrough {
        let base = LocalFileSystem()
        /// (call, directory, name) → errno, or nil to pass the call on.
        let fails: @Sendable (String, String, RelativePath) -> Int32?
        var mayLinkAnything = true

        private func check(_ call: String, _ directory: String, _ path: RelativePath) throws {
            if let code = fails(call, directory, path) { throw SystemError(call, path: path.displayed(in: directory), code: Errno(rawValue: code)) }
        }
        func status(_ path: RelativePath, in directory: String) throws -> FileSystem.Status {
            try check("lstat", directory, path)
            return try base.status(path, in: directory)
        }
        func readAll(_ path: RelativePath, in directory: String) throws -> [UInt8] {
            try check("read", directory, path)
            return try base.readAll(path, in: directory)
        }
        func unlink(_ path: RelativePath, in directory: String) throws {
            try check("unlink", directory, path)
            try base.unlink(path, in: directory)
        }
        func link(_ existing: RelativePath, in fromDir: String, to new: RelativePath, in toDir: String) throws {
            try check("link", toDir, new)
            try base.link(existing, in: fromDir, to: new, in: toDir)
        }
        func rename(_ from: RelativePath, in fromDir: String, to: RelativePath, in toDir: String, replace: Bool) throws {
            try check("rename", toDir, to)
            try base.rename(from, in: fromDir, to: to, in: toDir, replace: replace)
        }
        func mayLink(_ path: RelativePath, in directory: String, status: FileSystem.Status) -> Bool {
            mayLinkAnything && base.mayLink(path, in: directory, status: status)
        }
    }

    /// Every line a logger wrote.
    final class LogLines: Sendable {
        let lines = Mutex<[String]>([])
        var logger: Logger { Logger(level: .debug, sink: { [self] line in lines.withLock { $0.append(line) } }) }
        func containing(_ text: String) -> [String] { lines.withLock { $0 }.filter { $0.contains(text) } }
    }

    static func spool(_ dir: TemporaryDirectory, fs: any SpoolFileSystem = LocalFileSystem()) throws -> Spool {
        let spool = Spool(paths: SpoolPaths(root: dir.path + "/spool"), fs: fs)
        try spool.prepare()
        return spool
    }

    static func recovery(_ spool: Spool, _ log: LogLines) -> Recovery {
        Recovery(spool: spool, lifecycle: FileLifecycle(spool: spool, logger: log.logger), ignore: IgnoreRules(patterns: []),
                 recursive: false, logger: log.logger, clock: ManualClock())
    }

    static func write(_ text: String, _ name: String, in directory: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/" + name))
    }

    @Test func recoverySaysATemporaryManifestIsRemovedOnlyWhenItIs() throws {
        let dir = try TemporaryDirectory()
        let plain = try Self.spool(dir)
        let temporary = TemporaryNames.prefix + "1"
        try Self.write("cut", temporary, in: plain.paths.outbox)
        try Self.write("cut", temporary, in: plain.paths.retry)
        let failing = try Self.spool(dir, fs: Failing { call, _, name in call == "unlink" && name.name.display == temporary ? EIO : nil })

        let log = LogLines()
        _ = Self.recovery(failing, log).scanRetry()
        _ = Self.recovery(failing, log).scanOutbox()
        #expect(log.containing("removed a half-written").isEmpty, "\(log.lines.withLock { $0 })")
        let said = log.containing("cannot remove a half-written temporary manifest")
        #expect(said.count == 2 && said.allSatisfy { $0.contains("errno 5") && $0.contains(temporary) }, "\(said)")
        #expect(FileSystem.exists(RelativePath(temporary), in: plain.paths.outbox))

        let working = LogLines()
        _ = Self.recovery(plain, working).scanRetry()
        _ = Self.recovery(plain, working).scanOutbox()
        #expect(working.containing("removed a half-written temporary manifest").count == 2)
        #expect(!FileSystem.exists(RelativePath(temporary), in: plain.paths.outbox))
        #expect(!FileSystem.exists(RelativePath(temporary), in: plain.paths.retry))
    }

    /// A move cut after its links: the file is in sent/ with a record of its own there, and the
    /// outbox still holds its record. A record in sent/ that cannot be read is not "another
    /// file's": the outbox record stays where it is (never quarantined as a duplicate) until a
    /// start can read both.
    @Test func aRecordInSentThatCannotBeReadIsNotTakenForAnotherFilesRecord() throws {
        let dir = try TemporaryDirectory()
        let plain = try Self.spool(dir)
        let name = RelativePath("a.bin")
        try Self.write("x", "a.bin", in: plain.paths.sent)
        let status = try FileSystem.status(name, in: plain.paths.sent)
        var manifest = HookBookkeepingTests.manifest(.sent, path: name)
        manifest.mtime = status.mtimeText
        manifest.storedAs = plain.storedAs(name, in: .sent)
        try plain.writeManifest(manifest, for: name, in: .outbox)
        try plain.writeManifest(manifest, for: name, in: .sent)
        let sentDir = plain.paths.sent
        let failing = try Self.spool(dir, fs: Failing { call, directory, path in
            call == "read" && directory == sentDir && path == Spool.manifestName(for: name) ? EIO : nil
        })

        let log = LogLines()
        _ = Self.recovery(failing, log).scanOutbox()
        let said = log.containing("cannot finish an interrupted move")
        #expect(said.count == 1 && said[0].contains("errno 5"), "\(log.lines.withLock { $0 })")
        #expect(log.containing("duplicate manifest").isEmpty)
        #expect(FileSystem.exists(Spool.manifestName(for: name), in: plain.paths.outbox), "the outbox record stays")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: plain.paths.quarantine)) ?? []).isEmpty, "nothing quarantined")

        _ = Self.recovery(plain, LogLines()).scanOutbox()
        #expect(!FileSystem.exists(Spool.manifestName(for: name), in: plain.paths.outbox), "a start that reads it finishes the move")
        #expect(try plain.readManifest(for: name, in: .sent).get().id == manifest.id)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: plain.paths.quarantine)) ?? []).isEmpty)
    }

    /// An adoption cut after its swap leaves the producer's original under `.upl-adopt.NAME`.
    /// When the outbox name cannot be looked at, that original is kept (the settling throws),
    /// never removed as if the producer had removed the file.
    @Test func anAdoptionLeftoverIsKeptWhenTheOutboxNameCannotBeLookedAt() throws {
        let dir = try TemporaryDirectory()
        let plain = try Self.spool(dir)
        let name = RelativePath("a.bin")
        let leftover = SpoolPlace.adoptionLeftover(of: name)
        try Self.write("the producer's first bytes", leftover.display, in: plain.paths.outbox)
        try Self.write("newer", "a.bin", in: plain.paths.outbox)
        let outbox = plain.paths.outbox
        var fs = Failing { call, directory, path in call == "lstat" && directory == outbox && path == name ? EIO : nil }
        fs.mayLinkAnything = false
        let failing = try Self.spool(dir, fs: fs)

        #expect(throws: SystemError.self) { try FileAdoption(lifecycle: FileLifecycle(spool: failing, logger: LogLines().logger)).reconcileLeftover(leftover) }
        #expect(FileSystem.exists(leftover, in: outbox), "the producer's original is kept")
    }

    @Test func aManifestThatCannotBeMovedAsideBesideASymlinkIsSaid() throws {
        let dir = try TemporaryDirectory()
        let plain = try Self.spool(dir)
        let name = RelativePath("a.bin")
        try plain.writeManifest(HookBookkeepingTests.manifest(.queued, path: name), for: name, in: .outbox)
        #expect(symlink("/etc/hostname", plain.paths.outbox + "/a.bin") == 0)
        let quarantine = plain.paths.quarantine
        let failing = try Self.spool(dir, fs: Failing { call, directory, _ in call == "link" && directory == quarantine ? EIO : nil })
        let log = LogLines()
        let claimer = Claimer(spool: failing, profileName: "p", digest: .sha256, mimeTypes: MimeTypes(byExtension: [:]),
                              lifecycle: FileLifecycle(spool: failing, logger: log.logger), logger: log.logger)

        guard case .refused = claimer.claim(name, now: Date(timeIntervalSince1970: 1_800_000_000)) else {
            Issue.record("a symlink is refused")
            return
        }
        let said = log.containing("replaced by a symlink; cannot move it aside")
        #expect(said.count == 1 && said[0].contains("errno 5"), "\(log.lines.withLock { $0 })")
        #expect(FileSystem.exists(Spool.manifestName(for: name), in: plain.paths.outbox))
    }

    /// A record or a file in sent/ the disk will not show: retention says which and keeps the file,
    /// until a pass can look at both.
    @Test(arguments: [true, false])
    func retentionSaysWhatInSentItCannotLookAtAndKeepsTheFile(recordHidden: Bool) throws {
        let dir = try TemporaryDirectory()
        let plain = try Self.spool(dir)
        let name = RelativePath("old.bin")
        try Self.write("x", "old.bin", in: plain.paths.sent)
        // The record of what was sent says what the file is: retention deletes only such files.
        var record = HookBookkeepingTests.manifest(.sent, path: name)
        let status = try FileSystem.status(name, in: plain.paths.sent)
        (record.size, record.mtime) = (status.size, status.mtimeText)
        try plain.writeManifest(record, for: name, in: .sent)
        let sent = plain.paths.sent
        let hidden = recordHidden ? Spool.manifestName(for: name) : name
        let failing = try Self.spool(dir, fs: Failing { call, directory, path in
            call == "lstat" && directory == sent && path == hidden ? EIO : nil
        })
        let log = LogLines()
        let removed = Retention(spool: failing, keep: 1, logger: log.logger).sweep(now: Date().addingTimeInterval(3600))

        #expect(removed == 0)
        let said = log.containing("retention: cannot look at a file in sent/; it is kept")
        #expect(said.count == 1 && said[0].contains(hidden.display) && said[0].contains("errno 5"), "\(log.lines.withLock { $0 })")
        #expect(FileSystem.exists(name, in: sent))
        #expect(FileSystem.exists(Spool.manifestName(for: name), in: sent))
        #expect(Retention(spool: plain, keep: 1, logger: LogLines().logger).sweep(now: Date().addingTimeInterval(3600)) == 1)
    }

    @Test func aFileThatCannotBeStatedDuringItsUploadSaysWhy() throws {
        var st = stat()
        st.st_mode = S_IFREG | 0o644
        let source = UploadSource(fd: -1, status: FileSystem.Status(st), path: RelativePath("a.bin"), id: "i", sha256: nil,
                                  contentType: "application/octet-stream")
        let change = try #require(source.changeSinceClaim())
        #expect(change.hasPrefix("cannot stat it: ") && change.contains("errno 9"), "\(change)")
    }
}

/// A record in retry/ whose file was brought back to the outbox, cut before the record followed.
@Suite struct RetryRecordWithoutFileTests {
    @Test(arguments: [Manifest.State.failed, .retry])
    func startUpMovesItAsideAndLeavesTheFileQueued(state: Manifest.State) throws {
        let dir = try TemporaryDirectory()
        let spool = try SpoolFailureTests.spool(dir)
        let name = RelativePath("a.bin")
        try spool.writeManifest(HookBookkeepingTests.manifest(state, path: name), for: name, in: .retry)
        try SpoolFailureTests.write("the file, back in the outbox", name.display, in: spool.paths.outbox)

        let log = SpoolFailureTests.LogLines()
        let scan = SpoolFailureTests.recovery(spool, log).scanRetry()
        #expect(scan.due.isEmpty && scan.requeued.isEmpty)
        #expect(!FileSystem.exists(Spool.manifestName(for: name), in: spool.paths.retry))
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.paths.quarantine).contains { $0.hasPrefix("a.bin.manifest.json") })
        #expect(FileSystem.exists(name, in: spool.paths.outbox))
        #expect(log.containing("manifest in retry/ with no file; manifest moved aside").count == 1, "\(log.lines.withLock { $0 })")
    }

    @Test func aFileTheDiskWillNotSayAnythingAboutKeepsItsRecord() throws {
        let dir = try TemporaryDirectory()
        let plain = try SpoolFailureTests.spool(dir)
        let name = RelativePath("a.bin")
        try plain.writeManifest(HookBookkeepingTests.manifest(.failed, path: name), for: name, in: .retry)
        let failing = try SpoolFailureTests.spool(dir, fs: SpoolFailureTests.Failing { call, directory, path in
            call == "lstat" && directory == plain.paths.retry && path == name ? EIO : nil
        })

        let log = SpoolFailureTests.LogLines()
        _ = SpoolFailureTests.recovery(failing, log).scanRetry()
        #expect(FileSystem.exists(Spool.manifestName(for: name), in: plain.paths.retry))
        #expect(log.containing("cannot look at a file in retry/; its manifest stays").count == 1, "\(log.lines.withLock { $0 })")
    }
}
