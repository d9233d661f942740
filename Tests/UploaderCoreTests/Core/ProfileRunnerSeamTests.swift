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

/// The real runner — spool, recovery, claims, manifests, moves — with the network and time
/// replaced at their seams: no server, no real sleep, time moved by hand.
@Suite("The runner works on injected time and a scripted network", .serialized)
struct ProfileRunnerSeamTests {
    final class Rig {
        let dir: TemporaryDirectory
        let clock = ManualClock()
        let server: ScriptedServer
        let probe = ScriptedProbe()
        let runner: ProfileRunner
        let watcher: InotifyWatcher
        let spool: Spool

        init(_ script: [ScriptedServer.Answer], extra: String = "", url: String = "http://127.0.0.1:9/{name}") throws {
            dir = try TemporaryDirectory()
            server = ScriptedServer(script)
            let text = """
                [outbox t]
                spool = \(dir.path)/spool
                url = \(url)
                \(extra)
                """
            guard case .success(let loaded) = ConfigLoader.parse(text: text, path: dir.path + "/uploader.conf", environment: [:]) else {
                throw SystemError("config", path: nil, code: .invalid)
            }
            let profile = loaded.configuration.profiles[0]
            var seams = ProfileRunner.Seams()
            seams.clock = clock
            seams.makeTransport = { [server] in ScriptedTransport(server) }
            seams.probe = probe
            let logger = Logger(level: .error, clock: clock, sink: { _ in })
            runner = ProfileRunner(profile: profile, mode: .daemon, logger: logger, mimeTypes: MimeTypes(byExtension: [:]),
                                   hostname: "h", seams: seams)
            spool = runner.spool
            watcher = InotifyWatcher(logger: logger)
            try runner.prepare(watcher: watcher)
            try watcher.start()
        }

        func drop(_ name: String, _ bytes: [UInt8]) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: spool.paths.outbox + "/" + name))
        }

        /// Moves time and tells the owner, which wakes only for events; returns once it has seen the tick.
        func advance(by seconds: Double) {
            let seen = runner.snapshot.steps
            clock.advance(by: seconds)
            runner.loop.send(.tick)
            waitForOwner { runner.snapshot.steps > seen }
        }

        func manifest(_ name: String, in area: Spool.Area) -> Manifest? {
            try? spool.readManifest(for: RelativePath(name), in: area).get()
        }

        /// Waits (10 s at most) until the owner's thread has got to `condition`.
        func waitForOwner(_ condition: () -> Bool) {
            let deadline = Date().addingTimeInterval(10)
            while !condition() && Date() < deadline { usleep(500) }
        }

        func stop(grace: Double = 0) {
            runner.stop(grace: grace)
            runner.release(from: watcher)
            watcher.stop()
        }
    }

    /// Waits for the runner's threads to get somewhere (not for time to pass: the clock is ours).
    func eventually(_ what: String, _ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            if Date() > deadline { Issue.record("never happened: \(what)"); return }
            usleep(2000)
        }
    }

    @Test func aFileWaitsInRetryUntilTheClockSaysItIsDueThenArrivesWithTheSameKey() throws {
        let rig = try Rig([.status(503), .status(201)], extra: "backoff = 30s\nmax_backoff = 60s")
        let bytes = (0..<5000).map { UInt8(truncatingIfNeeded: $0) }
        try rig.drop("a.bin", bytes)
        rig.runner.begin(netlink: nil)
        eventually("a.bin in retry/") { rig.manifest("a.bin", in: .retry)?.state == .retry }
        let waiting = try #require(rig.manifest("a.bin", in: .retry))
        let due = try #require(waiting.nextAttemptAt.flatMap(Timestamp.parse))
        #expect(due.timeIntervalSince(rig.clock.now) <= 30)
        #expect(rig.server.received.count == 1)
        rig.advance(by: 31)
        eventually("a.bin in sent/") { rig.manifest("a.bin", in: .sent) != nil }
        let sent = try #require(rig.manifest("a.bin", in: .sent))
        #expect(sent.attempts.map(\.httpStatus) == [503, 201])
        #expect(rig.server.received.map(\.idempotencyKey) == [sent.id, sent.id])
        #expect(rig.server.received.last?.body == bytes, "the server got the file's exact bytes")
        rig.stop()
    }

    @Test func refusedFilesStayQueuedAndArriveAfterTheBackoffOnTheInjectedClock() throws {
        let rig = try Rig([.status(403), .status(403), .status(403)], extra: "concurrency = 1\nbackoff = 30s")
        let names = ["a.bin", "b.bin", "c.bin", "d.bin"]
        for (i, name) in names.enumerated() { try rig.drop(name, [UInt8(i), 1, 2]) }
        rig.runner.begin(netlink: nil)
        eventually("paused for refused credentials") { rig.runner.snapshot.pausedReason == .rejected }
        eventually("the refused files queued again") {
            names.compactMap { rig.manifest($0, in: .outbox) }.filter { $0.state == .queued && !$0.attempts.isEmpty }.count == 3
        }
        #expect(rig.runner.daemonState.lastError == "HTTP 403 Forbidden")
        #expect(rig.server.received.count == 3, "the fourth file waits")
        eventually("the refusals settled") { rig.runner.snapshot.inFlight == 0 }
        rig.advance(by: 29)
        #expect(rig.runner.snapshot.inFlight == 0 && rig.server.received.count == 3, "nothing before the backoff")
        rig.advance(by: 2)
        eventually("all four sent") { names.allSatisfy { rig.manifest($0, in: .sent) != nil } }
        for name in names {
            let sent = try #require(rig.manifest(name, in: .sent))
            #expect(sent.countedAttempts == 1, "\(name): the refusal is kept, not counted")
            #expect(sent.attempts.filter { $0.rejected == true }.allSatisfy { $0.httpStatus == 403 })
        }
        #expect(rig.runner.snapshot.pausedReason == nil)
        rig.stop()
    }

    @Test func aTusServerRefusingOurCredentialsPausesTheProfileAndFailsNoFile() throws {
        let rig = try Rig([.status(401), .status(401), .status(401)], extra: "protocol = tus\nconcurrency = 1")
        let names = ["a.bin", "b.bin", "c.bin", "d.bin"]
        for (i, name) in names.enumerated() { try rig.drop(name, [UInt8(i), 1, 2]) }
        rig.runner.begin(netlink: nil)
        eventually("paused for refused credentials") { rig.runner.snapshot.pausedReason == .rejected }
        eventually("the refused files queued again") {
            names.compactMap { rig.manifest($0, in: .outbox) }.filter { $0.attempts.last?.rejected == true && $0.state == .queued }.count == 3
        }
        #expect(try rig.spool.fs.list(RelativePath(bytes: []), in: rig.spool.paths.retry).isEmpty, "no file failed for a 401")
        rig.stop()
    }

    @Test func anUnreachableDestinationPausesUntilTheProbeSaysItIsBack() throws {
        let rig = try Rig([.unreachable, .status(201), .status(201)], extra: "concurrency = 1")
        rig.probe.set(reachable: false)
        try rig.drop("a.bin", [1, 2, 3])
        try rig.drop("b.bin", [4, 5, 6])
        rig.runner.begin(netlink: nil)
        eventually("offline") { !rig.runner.snapshot.online }
        rig.advance(by: 1)
        eventually("a first probe") { rig.probe.probes == 1 }
        #expect(rig.server.received.isEmpty, "nothing is sent while offline")
        // The file that met the closed door is put back as queued (a settle job, after the owner went offline).
        eventually("the attempted file back to queued") {
            let manifests = ["a.bin", "b.bin"].compactMap { rig.manifest($0, in: .outbox) }
            return !manifests.isEmpty && manifests.allSatisfy { $0.state == .queued }
        }
        for name in ["a.bin", "b.bin"] {
            #expect(rig.manifest(name, in: .outbox)?.attempts.isEmpty ?? true, "a failed connect is no attempt")
        }
        rig.probe.set(reachable: true)
        // Time moves in steps until a probe (the one in flight may still say "refused") finds it back.
        eventually("both sent") {
            if rig.manifest("a.bin", in: .sent) != nil && rig.manifest("b.bin", in: .sent) != nil { return true }
            rig.advance(by: 2)
            return false
        }
        #expect(rig.runner.snapshot.online)
        #expect(rig.manifest("a.bin", in: .sent)?.countedAttempts == 1)
        rig.stop()
    }

    @Test func shutdownLetsTheUploadRunForTheGraceOnTheInjectedClockThenAbortsIt() throws {
        let rig = try Rig([.hangUntilCancelled], extra: "shutdown_grace = 30s")
        try rig.drop("slow.bin", [7, 7, 7])
        rig.runner.begin(netlink: nil)
        eventually("the upload in flight") { rig.server.hanging == 1 }
        let stopped = Stopper(rig.runner)
        eventually("the stop taken in") { rig.runner.snapshot.stopping }
        rig.advance(by: 29)
        #expect(rig.server.hanging == 1, "within the grace the upload goes on")
        rig.advance(by: 2)
        eventually("stopped") { stopped.done }
        let manifest = try #require(rig.manifest("slow.bin", in: .outbox))
        #expect(manifest.state == .queued)
        #expect(manifest.attempts.count == 1 && manifest.attempts[0].interrupted == true && manifest.countedAttempts == 0)
        rig.runner.release(from: rig.watcher)
        rig.watcher.stop()
    }

    @Test func maxAttemptsIsRespected() throws {
        let rig = try Rig([.status(500), .status(500), .status(201)], extra: "max_attempts = 2\nbackoff = 1s\nmax_backoff = 1s")
        try rig.drop("a.bin", [1])
        rig.runner.begin(netlink: nil)
        eventually("first failure in retry/") { rig.manifest("a.bin", in: .retry)?.state == .retry }
        rig.advance(by: 2)
        eventually("failed for good") { rig.manifest("a.bin", in: .retry)?.state == .failed }
        #expect(rig.manifest("a.bin", in: .retry)?.lastError == "HTTP 500 Internal Server Error (gave up after 2 attempts)")
        rig.advance(by: 3600)
        #expect(rig.server.received.count == 2)
        rig.stop()
    }

    @Test func sentIsPrunedAtStartAndAgainWhenTheCoreSaysAPassIsDueOnTheInjectedClock() throws {
        // keep_sent = 1h: a pass every 360 s, timed from the end of the last.
        let rig = try Rig([], extra: "keep_sent = 1h")
        try rig.spool.prepare()
        let sent = rig.spool.paths.sent
        for (name, age) in [("old.txt", 7200.0), ("fresh.txt", 3500.0)] {
            for file in [name, name + ".manifest.json"] {
                try Data("{}".utf8).write(to: URL(fileURLWithPath: sent + "/" + file))
                try FileManager.default.setAttributes([.modificationDate: rig.clock.now.addingTimeInterval(-age)],
                                                      ofItemAtPath: sent + "/" + file)
            }
        }
        rig.runner.begin(netlink: nil)
        eventually("the first pass, at start") { !FileManager.default.fileExists(atPath: sent + "/old.txt") }
        #expect(FileManager.default.fileExists(atPath: sent + "/fresh.txt"), "within keep_sent")
        // The next pass comes when the core says one is due on the injected clock (360 s after the
        // first one's report; the watcher's own events may come between, so time moves in steps).
        eventually("a later pass, on the injected clock") {
            rig.advance(by: 120)
            return !FileManager.default.fileExists(atPath: sent + "/fresh.txt")
        }
        #expect(rig.clock.monotonic - 1000 >= 360, "not before the interval")
        rig.stop()
    }
}

/// Calls `stop` on a thread of its own (it blocks until the runner has stopped).
final class Stopper: @unchecked Sendable {
    private let flag = NSCondition()
    private var finished = false

    init(_ runner: ProfileRunner) {
        Thread { [self] in
            runner.stop(grace: runner.profile.shutdownGrace)
            flag.lock(); finished = true; flag.unlock()
        }.start()
    }

    var done: Bool { flag.lock(); defer { flag.unlock() }; return finished }
}
