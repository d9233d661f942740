@preconcurrency import Glibc
import Foundation
import Testing

/// The built uploader against moto (an S3 store in server mode, signature checks on) on loopback.
///
/// The size check uploads the issue's 200 MiB (16 MiB parts). The resume and change tests
/// use 40 MiB files with multipart_threshold = 8MiB and part_size = 5MiB (8 parts): the
/// parts logic is the same at any size, moto keeps every part in memory, and 40 MiB keeps
/// those slower, throttled tests to seconds on two shared cores.
@Suite(.serialized) struct S3UploadTests {
    let tmp: TempDir
    let moto: MotoServer
    let binary: UploaderBinary

    init() throws {
        tmp = try TempDir(prefix: "upl-s3")
        moto = try MotoServer()
        binary = try UploaderBinary()
    }

    /// Writes `uploader.conf` for one s3 profile (secret in a file) and returns its path.
    func config(secret: String? = nil, partSize: String = "5MiB", extra: String = "") throws -> String {
        let secretFile = try tmp.write("secret", (secret ?? moto.secretAccessKey) + "\n")
        chmod(secretFile, 0o600)
        let path = try tmp.write("uploader.conf", """
            [outbox cams]
            spool = spool
            url = s3://\(moto.bucket)/site/{path}
            s3_endpoint = \(moto.endpoint)
            s3_path_style = yes
            access_key_id = \(moto.accessKeyID)
            secret_access_key_file = secret
            multipart_threshold = 8MiB
            part_size = \(partSize)
            part_concurrency = 2
            backoff = 1s
            \(extra)

            """)
        return path
    }

    func manifest(_ relative: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: tmp.path("spool/" + relative)))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func partsRecorded(_ name: String) -> Int {
        guard let m = try? manifest("outbox/\(name).manifest.json"), let s3 = m["s3"] as? [String: Any] else { return 0 }
        return (s3["parts"] as? [Any])?.count ?? 0
    }

    func drop(_ name: String, bytes: Int) throws -> String { try tmp.dropRandom(name, bytes: bytes) }

    @Test func aSmallFileGoesUpInOnePutWithItsChecksum() throws {
        let conf = try config()
        let file = try drop("small.jpg", bytes: 300_000)
        let expected = try sha256(ofFile: file)
        let run = try binary.run(["run", "--once", "--config", conf], timeout: 60)
        #expect(run.exitCode == 0, "\(run)")

        let sent = try manifest("sent/small.jpg.manifest.json")
        #expect(sent["state"] as? String == "sent")
        #expect(sent["s3"] == nil)
        let object = try moto.object("site/small.jpg")
        #expect(object.sha256 == expected && object.size == 300_000)
        #expect(object.checksum == Data(try #require([UInt8](hex: expected))).base64EncodedString(), "x-amz-checksum-sha256 kept by the store")
        let puts = moto.requestLog().filter { $0.method == "PUT" && $0.target.hasPrefix("/\(moto.bucket)/site/small.jpg") }
        #expect(puts.count == 1 && puts.first?.target.contains("?") == false, "one plain PutObject: \(puts)")
    }

    @Test func aTwoHundredMebibyteFileGoesUpInPartsAndReadsBackIntact() throws {
        // The issue's size, with the default part size (16 MiB: 13 parts).
        let conf = try config(partSize: "16MiB")
        let file = try drop("big.bin", bytes: 200 << 20)
        let expected = try sha256(ofFile: file)
        let etag = try #require(try Self.multipartETag(file: file, partSize: 16 << 20))
        let run = try binary.run(["run", "--once", "--config", conf], timeout: 120)
        #expect(run.exitCode == 0, "\(run)")

        let sent = try manifest("sent/big.bin.manifest.json")
        #expect(sent["state"] as? String == "sent")
        #expect(sent["s3"] == nil, "the multipart record is dropped once complete")
        #expect((sent["remote"] as? [String: Any])?["etag"] as? String == "\"\(etag)\"")
        let object = try moto.object("site/big.bin")
        #expect(object.sha256 == expected && object.size == 200 << 20)
        #expect(moto.acceptedParts().sorted() == Array(1...13))
        #expect(try moto.openUploads().isEmpty)
    }

    @Test func aMultipartUploadKilledHalfwayResumesWithOnlyTheMissingParts() throws {
        // max_rate slows the first run so it can be killed between parts.
        let conf = try config(extra: "max_rate = 6MiB")
        let file = try drop("resume.bin", bytes: 40 << 20)
        let expected = try sha256(ofFile: file)
        let first = try binary.start(["run", "--config", conf])
        try waitUntil(timeout: 60, "three parts recorded in the manifest") { partsRecorded("resume.bin") >= 3 }
        first.kill9()
        _ = try first.waitForExit(timeout: 10)
        let before = moto.acceptedParts()
        #expect(before.count < 8, "the first run finished before it was killed: \(before)")

        let second = try binary.run(["run", "--once", "--config", conf], timeout: 120)
        #expect(second.exitCode == 0, "\(second)")
        let after = Array(moto.acceptedParts().dropFirst(before.count))
        #expect(Set(after).isDisjoint(with: before), "parts sent again: before \(before), after \(after)")
        #expect(Set(before + after) == Set(1...8), "before \(before), after \(after)")
        let log = moto.requestLog()
        #expect(log.filter { $0.method == "POST" && $0.target.hasSuffix("?uploads") }.count == 1, "one multipart upload, resumed")
        #expect(log.contains { $0.method == "GET" && $0.target.contains("uploadId=") }, "the resume asked ListParts")
        #expect(try moto.object("site/resume.bin").sha256 == expected)
        #expect(second.stderr.contains("resuming S3 multipart upload"))
    }

    @Test func aWrongSecretKeyLeavesTheFileQueuedWithSignatureDoesNotMatch() throws {
        let conf = try config(secret: "not-the-secret-key")
        _ = try drop("denied.txt", bytes: 1000)
        let run = try binary.run(["run", "--once", "--config", conf], timeout: 60)
        #expect(run.exitCode == 69, "\(run)")
        #expect(run.stderr.contains("destination refuses our credentials"), "\(run)")
        let held = try manifest("outbox/denied.txt.manifest.json")
        #expect(held["state"] as? String == "queued")
        let attempts = try #require(held["attempts"] as? [[String: Any]])
        #expect(attempts.count == 1 && attempts[0]["rejected"] as? Bool == true, "\(attempts)")
        let error = try #require(held["last_error"] as? String)
        #expect(error.contains("SignatureDoesNotMatch") && error.contains("check secret_access_key"), "\(error)")
        #expect(!run.stderr.contains("not-the-secret-key"), "the secret leaked into the log")
    }

    @Test func aFileChangedMidUploadAbortsTheUploadAndStartsAgain() throws {
        let conf = try config(extra: "max_rate = 6MiB")
        let file = try drop("growing.bin", bytes: 40 << 20)
        let daemon = try binary.start(["run", "--config", conf])
        defer { daemon.stop() }
        try waitUntil(timeout: 60, "a first part recorded") { partsRecorded("growing.bin") >= 1 }
        let handle = try #require(FileHandle(forWritingAtPath: file))
        handle.seekToEndOfFile()
        handle.write(Data(repeating: 0x5A, count: 1 << 20))
        try handle.close()
        let expected = try sha256(ofFile: file)

        try waitUntil(timeout: 90, "the changed file in sent/") {
            FileManager.default.fileExists(atPath: tmp.path("spool/sent/growing.bin.manifest.json"))
        }
        let object = try moto.object("site/growing.bin")
        #expect(object.sha256 == expected && object.size == (40 << 20) + (1 << 20))
        let log = moto.requestLog()
        #expect(log.contains { $0.method == "DELETE" && $0.target.contains("uploadId=") && (200...299).contains($0.status) },
                "the first multipart upload was aborted")
        #expect(log.filter { $0.method == "POST" && $0.target.hasSuffix("?uploads") }.count == 2)
        #expect(try moto.openUploads().isEmpty, "no orphaned upload left")
    }

    /// Part PUTs as the proxy in front of moto saw them: (part number, status), in order.
    static func partRequests(_ proxy: ForwardProxy) throws -> [(number: Int, status: Int)] {
        try proxy.forwarded().filter { $0.method == "PUT" }.compactMap { entry in
            guard let query = entry.target.split(separator: "?").last,
                  let number = query.split(separator: "&").first(where: { $0.hasPrefix("partNumber=") }).flatMap({ Int($0.dropFirst(11)) })
            else { return nil }
            return (number, entry.status)
        }
    }

    @Test func aPartAnswered503EndsTheAttemptAndTheNextSendsOnlyTheMissingParts() throws {
        let proxy = try ForwardProxy(upstreamPort: moto.port, failOnce: ("partNumber=2&", 503))
        let conf = try config(extra: "proxy = \(proxy.url)")
        let file = try drop("flaky.bin", bytes: 12 << 20)
        let expected = try sha256(ofFile: file)
        let daemon = try binary.start(["run", "--config", conf])
        defer { daemon.stop() }
        try waitUntil(timeout: 90, "flaky.bin in sent/") {
            FileManager.default.fileExists(atPath: tmp.path("spool/sent/flaky.bin.manifest.json"))
        }
        let sent = try manifest("sent/flaky.bin.manifest.json")
        let attempts = try #require(sent["attempts"] as? [[String: Any]])
        #expect(attempts.count == 2, "\(attempts)")
        #expect(attempts.first?["retryable"] as? Bool == true && attempts.first?["http_status"] as? Int == 503, "\(attempts)")
        #expect(try moto.object("site/flaky.bin").sha256 == expected)
        let parts = try Self.partRequests(proxy)
        #expect(parts.filter { $0.number == 2 }.map(\.status) == [503, 200], "part 2: refused once, then sent: \(parts)")
        #expect(parts.filter { $0.number == 1 }.count == 1, "part 1 sent once: \(parts)")
        #expect(moto.acceptedParts().sorted() == [1, 2, 3], "every part stored once")
        #expect(try proxy.forwarded().filter { $0.method == "POST" && $0.target.hasSuffix("?uploads") }.count == 1, "one multipart upload, resumed")
    }

    @Test func aPartAnswered503WithMaxAttemptsOneFailsTheFileAndKeepsItsParts() throws {
        let proxy = try ForwardProxy(upstreamPort: moto.port, failOnce: ("partNumber=2&", 503))
        let conf = try config(extra: "proxy = \(proxy.url)\nmax_attempts = 1")
        _ = try drop("once.bin", bytes: 12 << 20)
        let run = try binary.run(["run", "--once", "--config", conf], timeout: 90)
        #expect(run.exitCode == 1, "\(run)")
        let failed = try manifest("retry/once.bin.manifest.json")
        #expect(failed["state"] as? String == "failed")
        let attempts = try #require(failed["attempts"] as? [[String: Any]])
        #expect(attempts.count == 1 && attempts[0]["retryable"] as? Bool == true, "\(attempts)")
        #expect((failed["last_error"] as? String)?.contains("503") == true, "\(failed["last_error"] ?? "none")")
        let s3 = try #require(failed["s3"] as? [String: Any], "the multipart upload kept, for `uploader retry`")
        #expect((s3["parts"] as? [Any])?.isEmpty == false, "the stored parts recorded: \(s3)")
        #expect(FileManager.default.fileExists(atPath: tmp.path("spool/retry/once.bin")))
    }

    /// S3's multipart ETag: MD5 of the parts' MD5s, then `-COUNT`.
    static func multipartETag(file: String, partSize: Int) throws -> String? {
        let result = try ProcessRunner.run(["python3", "-c", """
            import hashlib, sys
            data = open(sys.argv[1], 'rb').read(); n = int(sys.argv[2])
            parts = [hashlib.md5(data[i:i+n]).digest() for i in range(0, len(data), n)]
            print(hashlib.md5(b''.join(parts)).hexdigest() + '-' + str(len(parts)))
            """, file, String(partSize)])
        return result.exitCode == 0 ? result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : nil
    }
}
