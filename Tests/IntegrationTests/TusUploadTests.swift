@preconcurrency import Glibc
import Foundation
import Testing

/// The built uploader against tuspyserver (a third-party tus 1.0 server, under uvicorn on
/// loopback), whose requests the fixture records: creation, chunks, resume after kill -9, a 503
/// on one chunk, a server that forgot the upload, and a file changed mid-upload (DESIGN §10).
///
/// The slow tests use 40 MiB files in 4 MiB chunks at max_rate = 8MiB: about five seconds,
/// long enough to act between chunks, short on two shared cores.
@Suite(.serialized) struct TusUploadTests {
    let tmp: TempDir
    let binary: UploaderBinary

    init() throws {
        tmp = try TempDir(prefix: "upl-tus-test")
        binary = try UploaderBinary()
    }

    /// Writes `uploader.conf` for one tus profile and returns its path.
    func config(_ server: TusServer, chunk: String = "1MiB", extra: String = "") throws -> String {
        try tmp.write("uploader.conf", """
            [uploader]
            log_level = debug

            [outbox clips]
            spool = spool
            url = \(server.creationURL)
            protocol = tus
            tus_chunk_size = \(chunk)
            backoff = 1s
            \(extra)

            """)
    }

    func drop(_ name: String, bytes: Int) throws -> String { try tmp.dropRandom(name, bytes: bytes) }

    func manifest(_ relative: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: tmp.path("spool/" + relative)))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func remote(_ relative: String) throws -> [String: Any] { try #require(try manifest(relative)["remote"] as? [String: Any]) }

    /// The server's confirmed offset as the outbox manifest records it (0 while none; polled, so
    /// a manifest not yet written is no failure).
    func recordedOffset(_ name: String) -> Int {
        guard let data = FileManager.default.contents(atPath: tmp.path("spool/outbox/\(name).manifest.json")),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let remote = json["remote"] as? [String: Any] else { return 0 }
        return remote["offset"] as? Int ?? 0
    }

    func sent(_ name: String) -> Bool { FileManager.default.fileExists(atPath: tmp.path("spool/sent/\(name).manifest.json")) }

    static func decodeMetadata(_ header: String) -> [String: String] {
        var pairs: [String: String] = [:]
        for item in header.split(separator: ",") {
            let parts = item.trimmingCharacters(in: .whitespaces).split(separator: " ")
            guard parts.count == 2, let data = Data(base64Encoded: String(parts[1])) else { continue }
            pairs[String(parts[0])] = String(decoding: data, as: UTF8.self)
        }
        return pairs
    }

    @Test func aThreeMebibyteFileArrivesAsOnePostAndThreePatches() throws {
        let server = try TusServer()
        let conf = try config(server)
        let file = try drop("clip.mp4", bytes: 3 << 20)
        let expected = try sha256(ofFile: file)
        let run = try binary.run(["run", "--once", "--config", conf], timeout: 60)
        #expect(run.exitCode == 0, "\(run)")

        let log = try server.requests().filter { $0.method != "OPTIONS" }
        #expect(log.map(\.method) == ["POST", "PATCH", "PATCH", "PATCH"], "\(log.map(\.method))")
        let post = try #require(log.first)
        #expect(post.status == 201 && post.headers["tus-resumable"] == "1.0.0" && post.headers["upload-length"] == String(3 << 20))
        let sentManifest = try manifest("sent/clip.mp4.manifest.json")
        let metadata = Self.decodeMetadata(post.headers["upload-metadata"] ?? "")
        #expect(metadata == ["filename": "clip.mp4", "filetype": "video/mp4", "id": sentManifest["id"] as? String ?? "?"], "\(metadata)")
        let patches = log.dropFirst()
        #expect(patches.map(\.uploadOffset) == [0, 1 << 20, 2 << 20])
        for patch in patches {
            #expect(patch.status == 204 && patch.bodyBytes == 1 << 20)
            #expect(patch.headers["content-type"] == "application/offset+octet-stream" && patch.headers["tus-resumable"] == "1.0.0")
            #expect(patch.headers["content-digest"] == "sha-256=:\(Data(try #require([UInt8](hex: patch.bodySHA256))).base64EncodedString()):")
            #expect(patch.headers["upload-checksum"] == nil, "tuspyserver offers no checksum extension")
        }

        let location = try #require(post.responseHeaders["location"])
        #expect(sentManifest["state"] as? String == "sent")
        let remote = try #require(sentManifest["remote"] as? [String: Any])
        #expect(remote["upload_url"] as? String == location && remote["offset"] as? Int == 3 << 20, "\(remote)")
        let stored = try server.stored(location)
        #expect(stored.sha256 == expected && stored.size == 3 << 20)
        #expect(run.stderr.contains("tus upload created"), "\(run.stderr)")
    }

    @Test func anUploadKilledMidwayResumesWithHeadFromTheServersOffset() throws {
        let server = try TusServer()
        let conf = try config(server, chunk: "4MiB", extra: "max_rate = 8MiB")
        let file = try drop("long.bin", bytes: 40 << 20)
        let expected = try sha256(ofFile: file)
        let first = try binary.start(["run", "--config", conf])
        try waitUntil(timeout: 60, "two chunks recorded in the manifest") { recordedOffset("long.bin") >= 8 << 20 }
        first.kill9()
        _ = try first.waitForExit(timeout: 10)
        try server.waitUntilIdle()
        let before = try server.requests().count
        #expect(recordedOffset("long.bin") < 40 << 20, "the first run finished before it was killed")

        let second = try binary.run(["run", "--once", "--config", conf], timeout: 120)
        #expect(second.exitCode == 0, "\(second)")
        let log = try server.requests()
        let after = log.dropFirst(before).filter { $0.method != "OPTIONS" }
        let head = try #require(after.first, "no request after the restart")
        #expect(head.method == "HEAD" && head.status == 200, "the restart began with \(head.method) \(String(describing: head.status))")
        let resumeAt = try #require(head.answeredOffset)
        #expect(resumeAt >= 8 << 20, "the server holds \(resumeAt) bytes")
        let patches = after.filter { $0.method == "PATCH" }
        #expect(patches.first?.uploadOffset == resumeAt, "resumed at \(String(describing: patches.first?.uploadOffset)), server had \(resumeAt)")
        var next = resumeAt
        for patch in patches {
            #expect(patch.uploadOffset == next, "a PATCH at \(String(describing: patch.uploadOffset)), expected \(next)")
            next += patch.bodyBytes
        }
        #expect(next == 40 << 20)
        #expect(log.filter { $0.method == "POST" }.count == 1, "one upload, resumed")
        let location = try #require(try remote("sent/long.bin.manifest.json")["upload_url"] as? String)
        #expect(try server.stored(location).sha256 == expected)
        #expect(second.stderr.contains("resuming tus upload"), "\(second.stderr)")
    }

    @Test func aFiveHundredThreeOnOnePatchCostsOnlyThatChunk() throws {
        let server = try TusServer(failPatches: [2])
        let conf = try config(server)
        let file = try drop("flaky.bin", bytes: 3 << 20)
        let expected = try sha256(ofFile: file)
        let daemon = try binary.start(["run", "--config", conf])
        defer { daemon.stop() }
        try waitUntil(timeout: 60, "the file in sent/") { sent("flaky.bin") }

        let log = try server.requests().filter { $0.method != "OPTIONS" }
        #expect(log.map(\.method) == ["POST", "PATCH", "PATCH", "HEAD", "PATCH", "PATCH"], "\(log.map(\.method))")
        let patches = log.filter { $0.method == "PATCH" }
        #expect(patches.map(\.uploadOffset) == [0, 1 << 20, 1 << 20, 2 << 20])
        #expect(patches.map(\.status) == [204, 503, 204, 204] && patches[1].injected)
        #expect(patches.reduce(0) { $0 + $1.bodyBytes } == 4 << 20, "the file once, and the refused chunk once more")
        #expect(log.first { $0.method == "HEAD" }?.answeredOffset == 1 << 20)
        let sentManifest = try manifest("sent/flaky.bin.manifest.json")
        let attempts = try #require(sentManifest["attempts"] as? [[String: Any]])
        #expect(attempts.count == 2 && attempts.first?["http_status"] as? Int == 503, "\(attempts)")
        let location = try #require((sentManifest["remote"] as? [String: Any])?["upload_url"] as? String)
        #expect(try server.stored(location).sha256 == expected)
    }

    @Test func aServerThatForgotTheUploadGetsAFreshOne() throws {
        let server = try TusServer()
        let conf = try config(server, chunk: "4MiB", extra: "max_rate = 8MiB")
        let file = try drop("forgotten.bin", bytes: 40 << 20)
        let expected = try sha256(ofFile: file)
        let first = try binary.start(["run", "--config", conf])
        try waitUntil(timeout: 60, "a chunk recorded in the manifest") { recordedOffset("forgotten.bin") >= 4 << 20 }
        first.kill9()
        _ = try first.waitForExit(timeout: 10)
        try server.waitUntilIdle()
        let oldURL = try #require(try remote("outbox/forgotten.bin.manifest.json")["upload_url"] as? String)
        try server.forgetEverything()
        let before = try server.requests().count

        let second = try binary.run(["run", "--once", "--config", conf], timeout: 120)
        #expect(second.exitCode == 0, "\(second)")
        let after = try server.requests().dropFirst(before).filter { $0.method != "OPTIONS" }
        #expect(after.first?.method == "HEAD" && after.first?.status == 404, "\(after.map { "\($0.method) \(String(describing: $0.status))" })")
        #expect(after.filter { $0.method == "POST" }.count == 1, "a fresh upload")
        #expect(after.first { $0.method == "PATCH" }?.uploadOffset == 0)
        let newURL = try #require(try remote("sent/forgotten.bin.manifest.json")["upload_url"] as? String)
        #expect(newURL != oldURL)
        #expect(try server.stored(newURL).sha256 == expected)
        #expect(second.stderr.contains("tus server no longer has the upload"), "\(second.stderr)")
    }

    @Test func aFileChangedMidUploadHasItsOldUploadDeletedAndTheNewContentDelivered() throws {
        let server = try TusServer()
        let conf = try config(server, chunk: "4MiB", extra: "max_rate = 8MiB")
        let file = try drop("growing.bin", bytes: 40 << 20)
        let daemon = try binary.start(["run", "--config", conf])
        defer { daemon.stop() }
        try waitUntil(timeout: 60, "a first chunk recorded") { recordedOffset("growing.bin") >= 4 << 20 }
        let oldURL = try #require(try remote("outbox/growing.bin.manifest.json")["upload_url"] as? String)
        let handle = try #require(FileHandle(forWritingAtPath: file))
        handle.seekToEndOfFile()
        handle.write(Data(repeating: 0x5A, count: 1 << 20))
        try handle.close()
        let expected = try sha256(ofFile: file)

        try waitUntil(timeout: 90, "the changed file in sent/") { sent("growing.bin") }
        let log = try server.requests()
        let delete = try #require(log.first { $0.method == "DELETE" }, "no DELETE: \(log.map(\.method))")
        #expect(oldURL.hasSuffix(delete.path) && delete.status == 204 && delete.headers["tus-resumable"] == "1.0.0")
        #expect(!server.holds(oldURL), "the old upload is gone from the server")
        let posts = log.filter { $0.method == "POST" }
        #expect(posts.count == 2 && posts.last?.headers["upload-length"] == String((40 << 20) + (1 << 20)))
        let newURL = try #require(try remote("sent/growing.bin.manifest.json")["upload_url"] as? String)
        #expect(newURL != oldURL)
        let stored = try server.stored(newURL)
        #expect(stored.sha256 == expected && stored.size == (40 << 20) + (1 << 20))
    }

    @Test func aServerOfferingSHA256ChecksumsGetsOneOnEveryChunk() throws {
        let server = try TusServer(checksum: true)
        let conf = try config(server)
        let file = try drop("checked.bin", bytes: (2 << 20) + 1000)
        let expected = try sha256(ofFile: file)
        let run = try binary.run(["run", "--once", "--config", conf], timeout: 60)
        #expect(run.exitCode == 0, "\(run)")
        let log = try server.requests()
        #expect(log.filter { $0.method == "OPTIONS" && $0.headers["user-agent"]?.hasPrefix("uploader/") == true }.count == 1,
                "the offer is asked once")
        let patches = log.filter { $0.method == "PATCH" }
        #expect(patches.map(\.bodyBytes) == [1 << 20, 1 << 20, 1000])
        for patch in patches {
            let digest = Data(try #require([UInt8](hex: patch.bodySHA256))).base64EncodedString()
            #expect(patch.headers["upload-checksum"] == "sha256 \(digest)", "\(patch.headers)")
        }
        let location = try #require(try remote("sent/checked.bin.manifest.json")["upload_url"] as? String)
        #expect(try server.stored(location).sha256 == expected)
    }
}

extension TusUploadTests {
    @Test func theTusExamplePassesCheckConfigAndUploadsToTuspyserver() throws {
        let server = try TusServer()
        let source = PackagePaths.root + "/examples/tus/uploader.conf"
        let conf = try tmp.write("uploader.conf", try Data(contentsOf: URL(fileURLWithPath: source)))
        let token = try tmp.write("tus.token", "tus-token-321\n")
        #expect(chmod(token, 0o600) == 0)
        let environment = ["UPLOAD_URL": "http://127.0.0.1:\(server.port)"]
        let checked = try binary.run(["check-config", "--config", conf], environment: environment)
        #expect(checked.exitCode == 0 && checked.stdout.contains("protocol = tus\ntus_chunk_size = 8MiB\n"), "\(checked)")
        #expect(!checked.stdout.contains("tus-token-321"))

        _ = try tmp.mkdir("spool/videos/outbox")
        let file = try tmp.writeRandom("spool/videos/outbox/talk.webm", count: 300_000)
        let expected = try sha256(ofFile: file)
        let run = try binary.run(["run", "--once", "--config", conf], environment: environment, timeout: 60)
        #expect(run.exitCode == 0, "\(run)")
        let log = try server.requests().filter { $0.headers["user-agent"]?.hasPrefix("uploader/") == true }
        #expect(log.map(\.method) == ["POST", "OPTIONS", "PATCH"], "\(log.map(\.method))")
        for request in log {
            #expect(request.headers["authorization"] == "Bearer tus-token-321" && request.headers["x-site"] == "north")
        }
        let url = try #require(try remote("videos/sent/talk.webm.manifest.json")["upload_url"] as? String)
        #expect(try server.stored(url).sha256 == expected)
    }
}

extension TusUploadTests {
    @Test func aFileChangedWhileTheDaemonWasDownHasItsOldUploadDeletedAtTheNextStart() throws {
        let server = try TusServer()
        let conf = try config(server, chunk: "4MiB", extra: "max_rate = 8MiB")
        let file = try drop("rewritten.bin", bytes: 40 << 20)
        let first = try binary.start(["run", "--config", conf])
        try waitUntil(timeout: 60, "a first chunk recorded") { recordedOffset("rewritten.bin") >= 4 << 20 }
        first.kill9()
        _ = try first.waitForExit(timeout: 10)
        try server.waitUntilIdle()
        let oldURL = try #require(try remote("outbox/rewritten.bin.manifest.json")["upload_url"] as? String)
        let replacement = try tmp.writeRandom(".replacement", count: 2 << 20)
        #expect(rename(replacement, file) == 0)
        let expected = try sha256(ofFile: file)
        let before = try server.requests().count

        let second = try binary.run(["run", "--once", "--config", conf], timeout: 60)
        #expect(second.exitCode == 0, "\(second)")
        let after = try server.requests().dropFirst(before).filter { $0.method != "OPTIONS" }
        #expect(after.map(\.method) == ["DELETE", "POST", "PATCH"], "\(after.map(\.method))")
        #expect(after.first.map { oldURL.hasSuffix($0.path) && $0.status == 204 } == true)
        #expect(!server.holds(oldURL))
        let newURL = try #require(try remote("sent/rewritten.bin.manifest.json")["upload_url"] as? String)
        #expect(try server.stored(newURL).sha256 == expected)
    }
}
