@preconcurrency import Glibc
import Foundation
import Testing

/// sent/ at scale, with the built binary against nginx: `after_send = delete` (with and without
/// an `on_sent` hook), `keep_sent_bytes`, and `status` counting deliveries from the sent ledger
/// instead of reading sent/.
@Suite struct SentAtScaleTests {
    /// `exitCode`: 0, or 5 before the daemon first made the outbox and retry/ (a spool not there yet).
    private func status(_ fixture: ServiceFixture, exitCode: Int32 = 0) throws -> [String: Any] {
        let result = try fixture.run(["status", "--json"])
        #expect(result.exitCode == exitCode, "\(result)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return try #require((object?["profiles"] as? [String: Any])?["p"] as? [String: Any], "\(result.stdout)")
    }

    private func sent24h(_ fixture: ServiceFixture, exitCode: Int32 = 0) throws -> [Int] {
        let t = try status(fixture, exitCode: exitCode)["sent_24h"] as? [String: Any]
        return [t?["files"] as? Int ?? -1, t?["bytes"] as? Int ?? -1]
    }

    private func entries(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    private static func payload(_ size: Int, seed: UInt8) -> Data {
        Data((0..<size).map { UInt8(truncatingIfNeeded: $0 * 31 + Int(seed)) })
    }

    /// One open, write and close: thousands of files in a moment.
    private static func create(_ path: String, _ text: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw HarnessError("create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard text.withCString({ write(fd, $0, strlen($0)) }) == text.utf8.count else { throw HarnessError("write \(path)") }
    }

    @Test func deleteWithoutAHookLeavesSentEmptyAndStatusCountsTheDelivery() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: sink.url("up/{path}"), extra: "after_send = delete")
        let data = Self.payload(70_000, seed: 1)
        try fixture.drop("report.bin", data)
        let result = try fixture.run(["run", "--once"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(try sha256(ofFile: sink.file("up/report.bin")) == sha256(of: data), "the server has the file's bytes")
        #expect(entries(fixture.sentDirectory) == [], "the file and its manifest left sent/")
        #expect(entries(fixture.outbox) == [".upl-tmp"], "nothing of ours left in the outbox")
        #expect(try sent24h(fixture) == [1, 70_000], "the delivery is still counted, with no daemon running")
    }

    @Test func deleteWithAHookRunsItOnTheFinalPathsFirst() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        // The hook copies what it is given: both paths must still be readable when it runs.
        let hook = try fixture.tmp.write("hooks/copy.sh", """
            #!/bin/sh
            dir="$(dirname "$0")"
            cat "$1" > "$dir/file.copy" && cat "$2" > "$dir/manifest.copy" && echo "$1 $2" > "$dir/args"
            """)
        chmod(hook, 0o755)
        try fixture.writeConfig(url: sink.url("up/{path}"), extra: "after_send = delete\non_sent = \(hook)")
        let daemon = try fixture.startDaemon()
        let data = Self.payload(12_345, seed: 2)
        try fixture.drop("photo.jpg", data)
        try waitUntil(timeout: 20, "the hook to run and the file to leave sent/") {
            FileManager.default.fileExists(atPath: fixture.tmp.path("hooks/args")) && entries(fixture.sentDirectory).isEmpty
        }
        #expect(try sha256(ofFile: sink.file("up/photo.jpg")) == sha256(of: data))
        #expect(try sha256(ofFile: fixture.tmp.path("hooks/file.copy")) == sha256(of: data), "the hook read the file")
        let copied = try #require(FileManager.default.contents(atPath: fixture.tmp.path("hooks/manifest.copy")))
        let manifest = try #require(try JSONSerialization.jsonObject(with: copied) as? [String: Any])
        #expect(manifest["state"] as? String == "sent" && manifest["stored_as"] as? String == "sent/photo.jpg")
        let args = try String(contentsOfFile: fixture.tmp.path("hooks/args"), encoding: .utf8)
        #expect(args == "\(fixture.sentDirectory)/photo.jpg \(fixture.sentDirectory)/photo.jpg.manifest.json\n")
        #expect(try sent24h(fixture) == [1, 12_345])
        #expect(entries(fixture.spool + "/.hooks-due") == [], "the marker went once the file had left")
        #expect(try stopDaemon(daemon).exitCode == 0)
    }

    @Test func statusCountsDeliveriesNotFilesPlacedInSent() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: sink.url("up/{path}"))
        // 2,000 files with manifests put into sent/ by hand: no delivery recorded them.
        try FileManager.default.createDirectory(atPath: fixture.sentDirectory, withIntermediateDirectories: true)
        for i in 0..<2_000 {
            let name = fixture.sentDirectory + "/by-hand-\(i).bin"
            try Self.create(name, "x")
            try Self.create(name + ".manifest.json", #"{"version":1,"state":"sent","size":1}"#)
        }
        // No daemon has made the outbox and retry/ yet: status says so (5) and still counts.
        #expect(try sent24h(fixture, exitCode: 5) == [0, 0], "files in sent/ are not what status counts")
        try fixture.drop("one.bin", Self.payload(4321, seed: 3))
        #expect(try fixture.run(["run", "--once"]).exitCode == 0)
        #expect(try sent24h(fixture) == [1, 4321], "the delivery, from the ledger")
        #expect(entries(fixture.sentDirectory).count == 4_002, "after_send = keep leaves it in sent/, by-hand files untouched")
    }

    @Test func keepSentBytesDeletesTheOldestFilesAndTheirManifests() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        // Each file 998 bytes, its manifest 2: the bound holds the two newest.
        try fixture.writeConfig(url: sink.url("up/{path}"), extra: "keep_sent_bytes = 2500")
        try FileManager.default.createDirectory(atPath: fixture.sentDirectory, withIntermediateDirectories: true)
        for (days, name) in [(5, "a"), (4, "b"), (3, "c"), (2, "d"), (1, "e")] {
            let path = fixture.sentDirectory + "/\(name).bin"
            try Data(repeating: 7, count: 998).write(to: URL(fileURLWithPath: path))
            try Data("{}".utf8).write(to: URL(fileURLWithPath: path + ".manifest.json"))
            try fixture.age(path + ".manifest.json", seconds: Double(days) * 86_400)
        }
        let result = try fixture.run(["run", "--once"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(entries(fixture.sentDirectory) == ["d.bin", "d.bin.manifest.json", "e.bin", "e.bin.manifest.json"])
        #expect(result.stderr.contains("retention: deleted old files from sent/"), "\(result.stderr)")
    }
}
