@preconcurrency import Glibc
import Foundation
import Synchronization
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderTransfer
@testable import UploaderCore

/// Waiting is the clock's: a hook's timeout ends when the injected clock says, or at once
/// when what it waits for happens — so a test (or the simulator) moves time by
/// hand instead of sleeping, and nothing polls.
@Suite struct ClockWaitTests {
    /// Waits (10 s at most, in real time) for another thread to get somewhere.
    static func eventually(_ what: String, _ condition: () throws -> Bool) rethrows {
        let deadline = Date().addingTimeInterval(10)
        while try !condition() {
            if Date() > deadline { Issue.record("never happened: \(what)"); return }
            usleep(1000)
        }
    }

    @Test func theSystemClocksWaitEndsAtTheLatchAtOnceAndElseAtTheDeadline() {
        let clock = SystemClock()
        let latch = Latch()
        let started = clock.monotonic
        DispatchQueue.global().async { latch.open() }
        #expect(clock.wait(for: latch, until: started + 30), "the latch ends it")
        #expect(clock.monotonic - started < 10)
        #expect(clock.wait(for: latch, until: started), "an open latch answers at once")

        let shut = Latch()
        let from = clock.monotonic
        #expect(!clock.wait(for: shut, until: from + 0.05))
        #expect(clock.monotonic >= from + 0.05)
        clock.sleep(until: clock.monotonic + 0.02)
        #expect(clock.monotonic >= from + 0.07)
    }

    @Test func aManualClocksWaitEndsOnlyWhenTheClockReachesTheDeadline() {
        let clock = ManualClock()
        let ended = Latch()
        let deadline = clock.monotonic + 5
        Thread { _ = clock.wait(for: nil, until: deadline); ended.open() }.start()
        Self.eventually("the thread waiting on the clock") { clock.waiting == 1 }
        clock.advance(by: 4)
        #expect(!ended.isOpen && clock.waiting == 1, "a second short")
        clock.advance(by: 1)
        Self.eventually("the wait over") { ended.isOpen }
        #expect(clock.waiting == 0)
    }

    /// S3: a part answered 503 is not tried again within the attempt, and nothing waits on the
    /// clock: the attempt ends retryably (with the store's Retry-After), the multipart upload kept
    /// for the next attempt, which resumes it and sends only the missing part.
    @Test func anS3PartAnswered503EndsTheAttemptAndTheNextResumesIt() throws {
        let server = try FaultServer()
        try server.script([
            ["status": 200, "body": "<InitiateMultipartUploadResult><UploadId>up-1</UploadId></InitiateMultipartUploadResult>"],
            ["status": 503, "retry_after": "7"],
        ])
        let endpoint = try #require(S3Endpoint(parsing: "http://127.0.0.1:\(server.port)"))
        var target = S3Target(bucket: "b", key: try Template(parsing: "{path}"), endpoint: endpoint, endpointGiven: true, region: "us-east-1",
                              pathStyle: true, accessKeyID: "AKID", secretAccessKey: Secret(value: "secret"), sessionToken: nil)
        target.multipartThreshold = 1000
        target.partSize = 1 << 20
        target.partConcurrency = 1
        var profile = Profile(name: "test", spool: SpoolPaths(root: "/nonexistent"), destination: .s3(target))
        profile.connectTimeout = 5
        profile.stallTimeout = 10
        let file = try TestFile(TestFile.pattern(4000))
        let clock = ManualClock()
        let uploader = S3Uploader(profile: profile, target: target, logger: Logger(level: .error, sink: { _ in }), clock: clock)
        let request = UploadRequest(url: "", method: .put, headers: [], body: RequestBody([]), connectTimeout: 5, stallTimeout: 10,
                                    timeout: 0, tls: profile.tls, proxy: nil)
        let source = UploadSource(fd: file.fd, status: try FileSystem.status(fd: file.fd, path: file.path), path: RelativePath("file.bin"),
                                  id: "01HZX3TESTID", sha256: nil, contentType: "application/octet-stream")
        let values = Fixture.values(file, path: RelativePath("file.bin"))
        var kept: S3UploadState?
        let first = uploader.upload(source, resuming: nil, values: values, request: request, transport: CurlTransport()) { kept = $0 }
        guard case .retryLater(_, let retryAfter) = first.disposition else { Issue.record("\(first.disposition)"); return }
        #expect(retryAfter == 7, "the store's Retry-After goes to the core")
        #expect(clock.waiting == 0)
        #expect(try server.requests().map(\.method) == ["POST", "PUT"], "the part is sent once")
        let saved = try #require(kept, "the multipart upload is kept for the next attempt")
        #expect(saved.uploadID == "up-1" && saved.parts.isEmpty)

        try server.script([
            ["status": 200, "body": "<ListPartsResult><IsTruncated>false</IsTruncated></ListPartsResult>"],
            ["status": 200, "headers": ["ETag": "\"part-1\""]],
            ["status": 200, "body": "<CompleteMultipartUploadResult><ETag>\"whole\"</ETag></CompleteMultipartUploadResult>"],
        ])
        let second = uploader.upload(source, resuming: saved, values: values, request: request, transport: CurlTransport()) { kept = $0 }
        guard case .sent = second.disposition else { Issue.record("\(second.disposition)"); return }
        let received = try server.requests()
        #expect(received.map(\.method) == ["POST", "PUT", "GET", "PUT", "POST"], "one multipart upload, resumed")
        #expect(received[3].body_sha256 == file.sha256.hexString, "the part's exact bytes")
        #expect(kept == nil, "a completed upload leaves no record")
    }

    /// A hook's timeout is measured on the injected clock; a hook that ends is seen at once.
    @Test func aHooksTimeoutComesWithTheClockAndItsExitAtOnce() {
        let clock = ManualClock()
        let quick = HookProcess(command: "/bin/sh", arguments: [Array("-c".utf8), Array("exit 3".utf8)], environment: [],
                                workingDirectory: "/", timeout: 5)
        #expect(quick.run(clock: clock) == .exited(3), "its exit ends the wait; the clock never moved")

        let hanging = HookProcess(command: "/bin/sleep", arguments: [Array("30".utf8)], environment: [], workingDirectory: "/", timeout: 5)
        let outcome = Mutex<HookProcess.Outcome?>(nil)
        let done = Latch()
        let started = SystemClock().monotonic
        Thread {
            let ended = hanging.run(clock: clock)
            outcome.withLock { $0 = ended }
            done.open()
        }.start()
        Self.eventually("the hook waiting on the clock") { clock.waiting == 1 }
        clock.advance(by: 5)
        #expect(SystemClock().wait(for: done, until: started + 20))
        #expect(outcome.withLock { $0 } == .timedOut)
        #expect(SystemClock().monotonic - started < 15, "SIGTERM ended it, not its own 30 s")
    }
}
