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

/// Which hook a manifest has due, how each run is recorded, and the markers that let start-up
/// find due hooks without reading sent/.
@Suite struct HookBookkeepingTests {
    static let t1 = Date(timeIntervalSince1970: 1_795_956_679), t2 = t1.addingTimeInterval(2), t3 = t1.addingTimeInterval(5)

    static func manifest(_ state: Manifest.State, path: RelativePath = RelativePath("a.bin")) -> Manifest {
        Manifest(id: "b0a4c2de-0000-4000-8000-000000000001", profile: "p", path: path, size: 1, mtime: "m", sha256: nil,
                 contentType: "application/octet-stream", state: state, createdAt: "c")
    }

    @Test func aManifestWithoutHooksHasNoneDueAndNoHooksKey() throws {
        let m = Self.manifest(.sent)
        #expect(m.dueHook == nil)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(m.encodedLine())) as? [String: Any])
        #expect(object["hooks"] == nil, "no key at all: an upgrade never replays old hooks")
    }

    @Test func theFinalStateNamesItsHookDueWithEveryTimeNull() throws {
        var sent = Self.manifest(.sent)
        sent.markHookDue()
        #expect(sent.dueHook == "on_sent")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(sent.encodedLine())) as? [String: Any])
        let hooks = try #require(object["hooks"] as? [[String: Any]])
        #expect(hooks.count == 1 && hooks[0]["name"] as? String == "on_sent")
        for key in ["started_at", "ended_at", "exit_status"] { #expect(hooks[0][key] is NSNull, "\(key)") }
        #expect(try Manifest.decode(Data(sent.encodedLine())) == sent)

        var failed = Self.manifest(.failed)
        failed.markHookDue()
        #expect(failed.dueHook == "on_failed")
        var retry = Self.manifest(.retry)
        retry.markHookDue()
        #expect(retry.hooks == nil && retry.dueHook == nil, "a retry runs no hook")
    }

    @Test func aFinishedRunIsNoLongerDue() {
        var m = Self.manifest(.sent)
        m.markHookDue()
        m.recordHookStart("on_sent", at: Self.t1)
        #expect(m.dueHook == "on_sent", "started, not finished")
        #expect(m.hooks?.count == 1, "the run fills in the entry that named it due")
        m.recordHookEnd("on_sent", at: Self.t2, exitStatus: 3)
        #expect(m.dueHook == nil, "a failing hook has finished too")
        #expect(m.hooks == [Manifest.HookRun(name: "on_sent", startedAt: Timestamp.format(Self.t1), endedAt: Timestamp.format(Self.t2),
                                             exitStatus: 3)])
    }

    @Test func aRunCutByACrashStaysDueAndTheRunAgainAppendsAnEntry() {
        var m = Self.manifest(.sent)
        m.markHookDue()
        m.recordHookStart("on_sent", at: Self.t1)
        // kill -9 here; start-up runs it again.
        m.recordHookStart("on_sent", at: Self.t2)
        m.recordHookEnd("on_sent", at: Self.t3, exitStatus: 0)
        #expect(m.hooks?.map(\.startedAt) == [Timestamp.format(Self.t1), Timestamp.format(Self.t2)])
        #expect(m.hooks?.map(\.endedAt) == [nil, Timestamp.format(Self.t3)])
        #expect(m.dueHook == nil)
    }

    @Test func failingAgainAfterAnOperatorRetryMakesTheHookDueAgain() {
        var m = Self.manifest(.failed)
        m.markHookDue()
        m.recordHookStart("on_failed", at: Self.t1)
        m.recordHookEnd("on_failed", at: Self.t2, exitStatus: 0)
        m.state = .queued
        #expect(m.dueHook == nil)
        m.state = .sent
        #expect(m.dueHook == nil, "on_sent was never named due")
        m.markHookDue()
        #expect(m.dueHook == "on_sent" && m.hooks?.count == 2)
    }

    @Test func aMarkerSaysWhereItsManifestIsWhateverTheNameBytes() throws {
        let path = RelativePath(bytes: Array("sub/".utf8) + [0x61, 0xFF, 0x0A, 0x62])
        let marker = HookLedger.Marker(area: .retry, path: path, hook: "on_failed")
        #expect(marker.name.display.hasSuffix(".on_failed") && marker.name.bytes.count == 32 + ".on_failed".utf8.count)
        #expect(HookLedger.Marker(name: marker.name, content: marker.content) == marker)
        #expect(HookLedger.Marker(name: RelativePath("0123.on_failed"), content: marker.content) == nil, "name and content disagree")
        let outside = HookLedger.Marker(area: .sent, path: RelativePath("../../etc/passwd"), hook: "on_sent")
        #expect(HookLedger.Marker(name: outside.name, content: outside.content) == nil, "never a place outside the spool")
    }

    @Test func aMoveWithAHookDueWritesItsMarkerFirstAndOneWithoutWritesNone() throws {
        let dir = try TemporaryDirectory()
        let spool = Spool(paths: SpoolPaths(root: dir.path + "/spool"))
        try spool.prepare()
        let lifecycle = FileLifecycle(spool: spool, logger: Logger(level: .error, sink: { _ in }))
        let ledger = HookLedger(spool: spool)
        for (name, hooked) in [("plain.bin", false), ("hooked.bin", true)] {
            try Data("x".utf8).write(to: URL(fileURLWithPath: spool.paths.outbox + "/" + name))
            var m = Self.manifest(.sent, path: RelativePath(name))
            if hooked { m.markHookDue() }
            try spool.writeManifest(m, for: RelativePath(name), in: .outbox)
            try lifecycle.finish(RelativePath(name), manifest: m, to: .sent)
            if !hooked { #expect(!FileManager.default.fileExists(atPath: spool.paths.hooksDue), "no hook, no directory") }
        }
        var problems: [String] = []
        let markers = ledger.markers { problems.append($0.what) }
        #expect(markers == [HookLedger.Marker(area: .sent, path: RelativePath("hooked.bin"), hook: "on_sent")] && problems.isEmpty)
        // Run again after a crash, the move finds its marker in place.
        try ledger.ensureMarker(for: try spool.readManifest(for: RelativePath("hooked.bin"), in: .sent).get(), at: RelativePath("hooked.bin"),
                                in: .sent)
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.paths.hooksDue).count == 1)
        try ledger.remove(markers[0])
        #expect(ledger.markers { _ in }.isEmpty)
    }
}
