@preconcurrency import Glibc
import Foundation
import Synchronization
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool

/// A second look at a file's bytes that cannot read them says nothing of them: not that they
/// changed, not that they did not. A claim checking a record's digest is refused and the file stays
/// queued under its record (journalled seed 18280: claimed afresh, the same version took a new key);
/// a move checking the file before filing it stops where a crash would, and the next claim finishes
/// it (noJournal seed 11011: brought back as changed, beside a new file, the delivered file took a
/// second outbox name that a power cut kept).
@Suite struct UnreadableRecheckTests {
    /// The kernel's file system, but reads through a descriptor fail with EIO while `failing`.
    final class FailingReads: KernelPassThrough, Sendable {
        let base = LocalFileSystem()
        let failing = Atomic<Bool>(false)

        func read(fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String?) throws -> Int {
            if failing.load(ordering: .sequentiallyConsistent) { throw SystemError("read", path: path ?? "", code: Errno(rawValue: EIO)) }
            return try base.read(fd: fd, into: buffer, at: offset, path: path)
        }
    }

    struct Setup {
        let dir: TemporaryDirectory
        let fs = FailingReads()
        let spool: Spool
        let lifecycle: FileLifecycle
        let claimer: Claimer
        let name = RelativePath("cam.jpg")

        /// `cam.jpg` in the outbox, last written just before `now`.
        init(now: Date) throws {
            dir = try TemporaryDirectory()
            spool = Spool(paths: SpoolPaths(root: dir.path + "/spool"), fs: fs)
            try spool.prepare()
            let logger = Logger(level: .error, sink: { _ in })
            lifecycle = FileLifecycle(spool: spool, logger: logger)
            claimer = Claimer(spool: spool, profileName: "t", digest: .sha256, mimeTypes: MimeTypes(byExtension: [:]),
                              lifecycle: lifecycle, logger: logger)
            let path = spool.paths.outbox + "/" + name.display
            try Data("frame-0001".utf8).write(to: URL(fileURLWithPath: path))
            try SameTickRewriteTests.setMtime(path, now.addingTimeInterval(-0.001))
        }

        func claimed(now: Date) throws -> ClaimedFile {
            guard case .ready(let file) = claimer.claim(name, now: now) else { throw SameTickRewriteTests.HarnessFailure("not claimed") }
            return file
        }

        func recordID() throws -> String { try spool.readManifest(for: name, in: .outbox).get().id }
    }

    @Test func aClaimThatCannotReadTheFileAgainIsRefusedAndKeepsTheRecord() throws {
        let now = Date()
        let setup = try Setup(now: now)
        let first = try setup.claimed(now: now)
        try setup.spool.writeManifest(first.manifest, for: setup.name, in: .outbox)

        setup.fs.failing.store(true, ordering: .sequentiallyConsistent)
        guard case .refusedForNow(let reason) = setup.claimer.claim(setup.name, now: now.addingTimeInterval(30)) else {
            Issue.record("a failed re-hash must refuse the claim")
            return
        }
        #expect(reason.contains("cannot read the file to check it against its record") && reason.contains("Input/output error"))
        #expect(try setup.recordID() == first.manifest.id, "the record stays as it was")
        #expect(FileSystem.exists(setup.name, in: setup.spool.paths.outbox), "the file stays queued")

        setup.fs.failing.store(false, ordering: .sequentiallyConsistent)
        let again = try setup.claimed(now: now.addingTimeInterval(60))
        #expect(again.manifest.id == first.manifest.id, "readable again, the same version keeps its key")
    }

    @Test func aMoveThatCannotCheckTheFileStopsAndTheNextClaimFinishesIt() throws {
        let now = Date()
        let setup = try Setup(now: now)
        let file = try setup.claimed(now: now)
        #expect(file.writtenJustBefore, "its bytes are read again before it is filed")
        var sent = file.manifest
        sent.state = .sent

        setup.fs.failing.store(true, ordering: .sequentiallyConsistent)
        #expect(throws: SystemError.self) {
            try setup.lifecycle.finish(setup.name, manifest: sent, to: .sent, file: file.status, unchanged: { try file.contentChange() })
        }
        let outbox = setup.spool.paths.outbox, sentDir = setup.spool.paths.sent
        // Stopped where a crash after the file's step leaves it: its one name in sent/, its record
        // still in the outbox; not brought back, under no name of its own or beside one.
        let left = try FileManager.default.contentsOfDirectory(atPath: outbox).filter { !$0.hasPrefix(".") }
        #expect(left == [Spool.manifestName(for: setup.name).display])
        #expect(FileSystem.exists(setup.name, in: sentDir))
        #expect(try setup.spool.readManifest(for: setup.name, in: .outbox).get().storedAs == "sent/cam.jpg")

        setup.fs.failing.store(false, ordering: .sequentiallyConsistent)
        guard case .finishedByRecovery(.sent, let target, _, _) = setup.claimer.claim(setup.name, now: now.addingTimeInterval(30)) else {
            Issue.record("the next claim finishes the recorded move")
            return
        }
        #expect(target == setup.name)
        #expect(!FileSystem.exists(setup.name, in: outbox) && !FileSystem.exists(Spool.manifestName(for: setup.name), in: outbox))
        #expect(FileSystem.exists(setup.name, in: sentDir) && FileSystem.exists(Spool.manifestName(for: setup.name), in: sentDir))
    }
}
