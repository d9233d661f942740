import Foundation
import Testing

/// `uploader enqueue`: the daemon only ever sees complete files.
@Suite struct EnqueueTests {
    @Test func enqueuedFileReachesTheSinkWholeAndNothingPartialIsEverSeen() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: sink.url("up/{path}"))
        let daemon = try fixture.startDaemon()
        let source = try fixture.tmp.writeRandom("src/big.bin", count: 8 << 20)

        let result = try fixture.run(["enqueue", "--profile", "p", source])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("big.bin"))
        try waitUntil(timeout: 30, "big.bin to reach sent/") { fixture.exists("sent/big.bin.manifest.json") }

        #expect(try sha256(ofFile: sink.file("up/big.bin")) == sha256(ofFile: source))
        let puts = sink.accessLog().filter { $0["method"] as? String == "PUT" }
        #expect(puts.count == 1, "the daemon saw exactly one file: \(sink.accessLogLines())")
        #expect(puts.first?["uri"] as? String == "/up/big.bin")
        let sent = try FileManager.default.contentsOfDirectory(atPath: fixture.sentDirectory).sorted()
        #expect(sent == ["big.bin", "big.bin.manifest.json"])
        // The manifest's outbox name goes last, after two directory fsyncs: wait for the move's end.
        var outbox: [String] = []
        try waitUntil(timeout: 10, "the outbox to be empty (left: \(outbox))") {
            outbox = try FileManager.default.contentsOfDirectory(atPath: fixture.outbox).filter { $0 != ".upl-tmp" }
            return outbox.isEmpty
        }
        let manifest = try fixture.manifest("sent", "big.bin")
        #expect(manifest["sha256"] as? String == (try sha256(ofFile: source)))
        #expect(manifest["size"] as? Int == 8 << 20)
        #expect(FileManager.default.fileExists(atPath: source), "enqueue copies; the source stays")
        #expect(try stopDaemon(daemon).exitCode == 0)
    }

    @Test func enqueueWithMoveRenamesAndReportsEachMissingFile() throws {
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: "http://127.0.0.1:1/{path}")
        let source = try fixture.tmp.write("src/moved.txt", "move me\n")
        let missing = fixture.tmp.path("src/missing.txt")

        let result = try fixture.run(["enqueue", "--profile", "p", "--move", source, missing])
        #expect(result.exitCode != 0, "one file failed, so the exit is non-zero: \(result)")
        #expect(result.stderr.contains("missing.txt"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: source))
        #expect(try String(contentsOfFile: fixture.outbox + "/moved.txt", encoding: .utf8) == "move me\n")
        let hidden = try FileManager.default.contentsOfDirectory(atPath: fixture.outbox).filter { $0.hasPrefix(".") && $0 != ".upl-tmp" }
        #expect(hidden.isEmpty, "temporary files left behind: \(hidden)")
    }
}
