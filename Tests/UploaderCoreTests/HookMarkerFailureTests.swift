@preconcurrency import Glibc
import Foundation
import Synchronization
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore

/// A hook's marker in `.hooks-due/` is the only way start-up finds a hook left due: one that
/// cannot be read, or a directory that cannot be listed, is said with its path and errno and
/// never costs the hook — its marker stays, and a start that can read it runs the hook.
@Suite("A hook marker that cannot be read stays, and its hook still runs", .serialized)
struct HookMarkerFailureTests {
    /// The kernel's file system, but `.hooks-due/` fails as a dying disk or a wrong owner would.
    struct FailingMarkers: KernelPassThrough {
        enum Failure { case readEIO, listEACCES, unlinkEACCES }
        let base = LocalFileSystem()
        let hooksDue: String
        let failure: Failure

        func readAll(_ path: RelativePath, in directory: String) throws -> [UInt8] {
            if failure == .readEIO && directory == hooksDue {
                throw SystemError("read", path: path.displayed(in: directory), code: .io)
            }
            return try base.readAll(path, in: directory)
        }

        func unlink(_ path: RelativePath, in directory: String) throws {
            if failure == .unlinkEACCES && directory == hooksDue {
                throw SystemError("unlink", path: path.displayed(in: directory), code: .permissionDenied)
            }
            try base.unlink(path, in: directory)
        }

        func list(_ path: RelativePath, in directory: String) throws -> [FileSystem.Entry] {
            if failure == .listEACCES && directory == hooksDue && path.bytes.isEmpty {
                throw SystemError("opendir", path: directory, code: .permissionDenied)
            }
            return try base.list(path, in: directory)
        }
    }

    /// What the runner logged.
    final class LogLines: Sendable {
        let lines = Mutex<[String]>([])
    }

    /// A spool holding one delivered file, `a.bin`, in sent/ with `on_sent` due and its marker
    /// written; the hook appends its first argument to `ran.txt`.
    final class Rig {
        let dir: TemporaryDirectory
        let paths: SpoolPaths
        let profile: Profile
        let log = LogLines()

        init() throws {
            dir = try TemporaryDirectory()
            paths = SpoolPaths(root: dir.path + "/spool")
            let hook = dir.path + "/hook.sh"
            try Data("#!/bin/sh\necho \"$1\" >> \(dir.path)/ran.txt\n".utf8).write(to: URL(fileURLWithPath: hook))
            chmod(hook, 0o755)
            let text = """
                [outbox t]
                spool = \(paths.root)
                url = http://127.0.0.1:9/{name}
                on_sent = \(hook)
                """
            guard case .success(let loaded) = ConfigLoader.parse(text: text, path: dir.path + "/uploader.conf", environment: [:]) else {
                throw SystemError("config", path: nil, code: .invalid)
            }
            profile = loaded.configuration.profiles[0]
            let spool = Spool(paths: paths)
            try spool.prepare()
            try Data("x".utf8).write(to: URL(fileURLWithPath: paths.outbox + "/a.bin"))
            var manifest = HookBookkeepingTests.manifest(.sent, path: RelativePath("a.bin"))
            manifest.markHookDue()
            try spool.writeManifest(manifest, for: RelativePath("a.bin"), in: .outbox)
            try FileLifecycle(spool: spool, logger: Logger(level: .error, sink: { _ in })).finish(RelativePath("a.bin"), manifest: manifest,
                                                                                               to: .sent)
        }

        var markers: [String] { (try? FileManager.default.contentsOfDirectory(atPath: paths.hooksDue)) ?? [] }
        var hookRuns: [String] {
            ((try? String(contentsOfFile: dir.path + "/ran.txt", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        var sentManifest: Manifest? { try? Spool(paths: paths).readManifest(for: RelativePath("a.bin"), in: .sent).get() }

        /// Starts a runner on `fs` (recovery and the hooks left due), lets its hooks finish, and stops it.
        func start(on fs: any SpoolFileSystem) throws {
            var seams = ProfileRunner.Seams()
            seams.clock = ManualClock()
            seams.fs = fs
            seams.makeTransport = { ScriptedTransport(ScriptedServer([])) }
            seams.probe = ScriptedProbe()
            let logger = Logger(level: .info, sink: { [log] line in log.lines.withLock { $0.append(line) } })
            let runner = ProfileRunner(profile: profile, mode: .daemon, logger: logger, mimeTypes: MimeTypes(byExtension: [:]),
                                       hostname: "h", seams: seams)
            let watcher = InotifyWatcher(logger: logger)
            try runner.prepare(watcher: watcher)
            try watcher.start()
            runner.begin(netlink: nil)
            #expect(runner.hooks.waitUntilIdle(deadline: .now() + 20), "the hooks left due finish")
            runner.stop(grace: 0)
            runner.release(from: watcher)
            watcher.stop()
        }
    }

    @Test func aMarkerThatCannotBeReadStaysAndItsHookRunsAtAStartThatCanReadIt() throws {
        let rig = try Rig()
        let marker = try #require(rig.markers.first)
        try rig.start(on: FailingMarkers(hooksDue: rig.paths.hooksDue, failure: .readEIO))
        let said = rig.log.lines.withLock { $0 }.filter { $0.contains("cannot read a hook marker") }
        #expect(said.count == 1 && said[0].contains(rig.paths.hooksDue + "/" + marker) && said[0].contains("errno 5"), "\(rig.log.lines.withLock { $0 })")
        #expect(rig.markers == [marker], "the marker stays")
        #expect(rig.hookRuns.isEmpty)
        #expect(rig.sentManifest?.dueHook == "on_sent")

        try rig.start(on: LocalFileSystem())
        #expect(rig.hookRuns == [rig.paths.sent + "/a.bin"], "the hook ran once, on the delivered file")
        let runs = try #require(rig.sentManifest?.hooks)
        #expect(runs.count == 1 && runs[0].exitStatus == 0 && rig.sentManifest?.dueHook == nil, "\(runs)")
        #expect(rig.markers.isEmpty, "its marker goes once the run is recorded")
    }

    @Test func aHooksDueDirectoryThatCannotBeListedIsSaidWithItsPathAndErrnoAndLosesNoHook() throws {
        let rig = try Rig()
        let marker = try #require(rig.markers.first)
        try rig.start(on: FailingMarkers(hooksDue: rig.paths.hooksDue, failure: .listEACCES))
        let said = rig.log.lines.withLock { $0 }.filter { $0.contains("cannot list the hooks due") }
        #expect(said.count == 1 && said[0].contains(rig.paths.hooksDue) && said[0].contains("errno 13"), "\(rig.log.lines.withLock { $0 })")
        #expect(rig.markers == [marker] && rig.hookRuns.isEmpty)

        try rig.start(on: LocalFileSystem())
        #expect(rig.hookRuns == [rig.paths.sent + "/a.bin"])
        #expect(rig.markers.isEmpty)
    }

    @Test func aLeftoverTemporaryMarkerThatCannotBeRemovedIsSaidWithItsPathAndErrnoAndGoesOnceItCan() throws {
        let rig = try Rig()
        let leftover = TemporaryNames.prefix + "cut"
        try Data("half".utf8).write(to: URL(fileURLWithPath: rig.paths.hooksDue + "/" + leftover))
        let refusing = HookLedger(spool: Spool(paths: rig.paths, fs: FailingMarkers(hooksDue: rig.paths.hooksDue, failure: .unlinkEACCES)))
        var problems: [HookLedger.Problem] = []
        _ = refusing.markers { problems.append($0) }
        let said = problems.filter { $0.what == "cannot remove a marker's leftover temporary file; the next start tries again" }
        #expect(said.count == 1 && said[0].level == .warn && said[0].path == rig.paths.hooksDue + "/" + leftover, "\(problems)")
        #expect(said.first?.error?.contains("Permission denied (errno 13)") == true, "\(problems)")
        #expect(rig.markers.contains(leftover), "it stays for the next start")

        problems = []
        _ = HookLedger(spool: Spool(paths: rig.paths)).markers { problems.append($0) }
        #expect(problems.isEmpty, "\(problems)")
        #expect(!rig.markers.contains(leftover) && rig.markers.count == 1, "the leftover went; the real marker stays")
    }
}
