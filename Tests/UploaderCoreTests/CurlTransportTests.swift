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

@Suite("CurlTransport against the fault server")
struct CurlTransportTests {
    private func digestHeader(_ bytes: [UInt8]) -> String {
        "sha-256=:\(Data(SHA256.hash(bytes)).base64EncodedString()):"
    }

    @Test func rawPutSendsTheExactBytesOfATwentyMebibyteFileWithLengthDigestAndIdempotencyKey() throws {
        let server = try FaultServer()
        let file = try TestFile(TestFile.pattern(20 * 1024 * 1024 + 17))
        let request = try Fixture.request(try Fixture.profile(port: server.port), file)
        let result = CurlTransport().send(request)
        let response = try result.get()
        #expect(response.status == 200)
        #expect(response.bytesSent == file.size)

        let recorded = try #require(try server.requests().first)
        #expect(recorded.method == "PUT")
        #expect(recorded.path == "/up/file.bin")
        #expect(recorded.body_length == file.bytes.count)
        #expect(recorded.body_sha256 == file.sha256.hexString)
        #expect(recorded.header("Content-Length") == String(file.bytes.count))
        #expect(recorded.header("Content-Digest") == digestHeader(file.bytes))
        #expect(recorded.header("Idempotency-Key") == "01HZX3TESTID")
        #expect(recorded.header("User-Agent") == "uploader/\(UploaderVersion.string)")
        #expect(recorded.header("Transfer-Encoding") == nil)
        #expect(recorded.header("Expect") == nil)
    }

    @Test func digestIsComputedFromTheFileWhenTheManifestHasNone() throws {
        let server = try FaultServer()
        let file = try TestFile(Array("no digest in the manifest".utf8))
        let request = try Fixture.request(try Fixture.profile(port: server.port), file, manifestSHA: false)
        _ = try CurlTransport().send(request).get()
        let recorded = try #require(try server.requests().first)
        #expect(recorded.header("Content-Digest") == digestHeader(file.bytes))
        #expect(recorded.body == file.bytes)
    }

    @Test func bearerAndBasicAuthorizationHeadersAreExact() throws {
        let server = try FaultServer()
        let file = try TestFile(Array("auth".utf8))
        var profile = try Fixture.profile(port: server.port)
        profile.auth = .bearer(token: Secret(value: "tok-123"))
        profile.digest = .none
        let transport = CurlTransport()
        _ = try transport.send(try Fixture.request(profile, file)).get()
        profile.auth = .basic(username: "alice", password: Secret(value: "pä:ss"))
        _ = try transport.send(try Fixture.request(profile, file)).get()

        let recorded = try server.requests()
        #expect(recorded.count == 2)
        #expect(recorded[0].header("Authorization") == "Bearer tok-123")
        #expect(recorded[1].header("Authorization") == "Basic " + Data("alice:pä:ss".utf8).base64EncodedString())
        #expect(recorded[0].header("Content-Digest") == nil)
        #expect(recorded[0].headerCount("Authorization") == 1)
        // One handle, one keep-alive connection.
        #expect(recorded[0].client_port == recorded[1].client_port)
    }

    @Test func multipartBodyParsesWithFieldsFilenameAndPartContentType() throws {
        let server = try FaultServer()
        let file = try TestFile(TestFile.pattern(300_000))
        var profile = try Fixture.profile(port: server.port, url: "/form", body: .multipart, method: .post)
        profile.multipartField = "upload"
        profile.formFields = [TemplatedField(name: "source", value: try Template(parsing: "{hostname}")),
                              TemplatedField(name: "original", value: try Template(parsing: "{name}"))]
        let path = RelativePath("sub/my \"quoted\" résumé.pdf")
        let request = try Fixture.request(profile, file, path: path, contentType: "application/pdf")
        let response = try CurlTransport().send(request).get()
        #expect(response.status == 200)

        let recorded = try #require(try server.requests().first)
        #expect(recorded.method == "POST")
        #expect(recorded.header("Content-Length") == String(recorded.body_length))
        #expect(recorded.header("Content-Digest") == "sha-256=:\(Data(try #require([UInt8](hex: recorded.body_sha256))).base64EncodedString()):")
        let parts = try #require(recorded.multipart)
        #expect(parts.count == 3)
        #expect(parts[0].name == "source" && parts[0].value == "testhost" && parts[0].filename == nil)
        #expect(parts[1].name == "original" && parts[1].value == "my \"quoted\" résumé.pdf")
        #expect(parts[2].name == "upload")
        #expect(parts[2].filename == "my %22quoted%22 résumé.pdf")
        #expect(parts[2].content_type == "application/pdf")
        #expect(parts[2].length == file.bytes.count)
        #expect(parts[2].sha256 == file.sha256.hexString)
    }

    @Test func jsonBodyDecodesToFieldsNameSizeDigestAndContent() throws {
        let server = try FaultServer()
        let file = try TestFile(TestFile.pattern(70_000))
        var profile = try Fixture.profile(port: server.port, url: "/json", body: .json, method: .post)
        profile.formFields = [TemplatedField(name: "profile", value: try Template(parsing: "{profile}"))]
        _ = try CurlTransport().send(try Fixture.request(profile, file, path: RelativePath("a/data.bin"))).get()

        let recorded = try #require(try server.requests().first)
        let body = try #require(recorded.body)
        #expect(recorded.header("Content-Type") == "application/json")
        #expect(recorded.header("Content-Digest") == digestHeader(body))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        #expect(object["profile"] as? String == "test")
        #expect(object["name"] as? String == "data.bin")
        #expect((object["size"] as? NSNumber)?.intValue == file.bytes.count)
        #expect(object["sha256"] as? String == file.sha256.hexString)
        let content = try #require((object["content_base64"] as? String).flatMap { Data(base64Encoded: $0) })
        #expect([UInt8](content) == file.bytes)
    }

    @Test func statusesMapToDispositionsIncludingRetryAfter() throws {
        let server = try FaultServer()
        try server.script([["status": 503], ["status": 429, "retry_after": "2"], ["status": 403], ["status": 201]])
        let file = try TestFile(Array("statuses".utf8))
        let request = try Fixture.request(try Fixture.profile(port: server.port), file)
        let transport = CurlTransport()
        let now = Date()
        #expect(Disposition.decide(transport.send(request), now: now)
                == .retryLater(reason: "HTTP 503 Service Unavailable", retryAfter: nil))
        #expect(Disposition.decide(transport.send(request), now: now)
                == .retryLater(reason: "HTTP 429 Too Many Requests", retryAfter: 2))
        #expect(Disposition.decide(transport.send(request), now: now) == .rejected(reason: "HTTP 403 Forbidden"))
        guard case .sent(let response) = Disposition.decide(transport.send(request), now: now) else {
            Issue.record("201 is not sent"); return
        }
        #expect(response.status == 201 && response.statusText == "Created")
    }

    @Test func resetInTheMiddleOfTheBodyIsBroken() throws {
        let server = try FaultServer()
        try server.script([["reset_after_bytes": 65536]])
        let file = try TestFile(TestFile.pattern(8 << 20))
        let result = CurlTransport().send(try Fixture.request(try Fixture.profile(port: server.port), file))
        guard case .failure(.broken) = result else { Issue.record("expected .broken, got \(result)"); return }
        #expect(Disposition.decide(result, now: Date()).isRetryLater)
    }

    @Test func stallLongerThanTheStallTimeoutIsBroken() throws {
        let server = try FaultServer()
        try server.script([["stall_after_bytes": 1000, "stall_seconds": 10]])
        let file = try TestFile(TestFile.pattern(256 * 1024))
        var profile = try Fixture.profile(port: server.port)
        profile.stallTimeout = 1
        let started = Date()
        let result = CurlTransport().send(try Fixture.request(profile, file))
        guard case .failure(.broken) = result else { Issue.record("expected .broken, got \(result)"); return }
        #expect(Date().timeIntervalSince(started) < 4)
    }

    @Test func connectingToAClosedPortIsUnreachable() throws {
        let port = try closedPort()
        let file = try TestFile(Array("nobody listens".utf8))
        let result = CurlTransport().send(try Fixture.request(try Fixture.profile(port: port), file))
        guard case .failure(.unreachable) = result else { Issue.record("expected .unreachable, got \(result)"); return }
        #expect(Disposition.decide(result, now: Date()).isOffline)
    }

    @Test func cancellationDuringTheUploadIsCancelled() throws {
        let server = try FaultServer()
        try server.script([["stall_after_bytes": 0, "stall_seconds": 6]])
        let file = try TestFile(TestFile.pattern(1 << 20))
        let flag = CancellationFlag()
        var request = try Fixture.request(try Fixture.profile(port: server.port), file, cancellation: flag)
        request.progress = { sent in if sent > 0 { flag.cancel() } }
        let result = CurlTransport().send(request)
        guard case .failure(.cancelled(_, connected: true)) = result else { Issue.record("expected .cancelled connected, got \(result)"); return }
        #expect(Disposition.decide(result, now: Date()) == .interrupted(connected: true))
    }

    @Test func cancellationBeforeTheRequestWentOutIsNotConnected() throws {
        let server = try FaultServer()
        let file = try TestFile(Array("never sent".utf8))
        let flag = CancellationFlag()
        flag.cancel()
        let result = CurlTransport().send(try Fixture.request(try Fixture.profile(port: server.port), file, cancellation: flag))
        #expect(result == .failure(.cancelled(bytesSent: 0, connected: false)))
        #expect(Disposition.decide(result, now: Date()) == .interrupted(connected: false))
        #expect(try server.requests().isEmpty)
    }

    @Test func responseBodiesOverSixtyFourKibibytesAreTruncated() throws {
        let server = try FaultServer()
        try server.script([["big_response_bytes": 300_000]])
        let file = try TestFile(Array("big answer".utf8))
        let response = try CurlTransport().send(try Fixture.request(try Fixture.profile(port: server.port), file)).get()
        #expect(response.status == 200)
        #expect(response.body.utf8.count == 64 * 1024)
    }

    @Test func redirectToTheSameHostIsFollowedWithTheSameMethodAndBody() throws {
        let server = try FaultServer()
        try server.script([["status": 307, "headers": ["Location": "/moved/here"]]])
        let file = try TestFile(TestFile.pattern(100_000))
        let response = try CurlTransport().send(try Fixture.request(try Fixture.profile(port: server.port), file)).get()
        #expect(response.status == 200)
        #expect(response.effectiveURL == server.base + "/moved/here")
        let recorded = try server.requests()
        #expect(recorded.map(\.path) == ["/up/file.bin", "/moved/here"])
        #expect(recorded.allSatisfy { $0.method == "PUT" && $0.body_sha256 == file.sha256.hexString })
    }

    @Test func redirectToAnotherHostIsNotFollowed() throws {
        let server = try FaultServer()
        try server.script([["status": 302, "headers": ["Location": "http://localhost:\(server.port)/elsewhere"]]])
        let file = try TestFile(Array("stay".utf8))
        let result = CurlTransport().send(try Fixture.request(try Fixture.profile(port: server.port), file))
        let response = try result.get()
        #expect(response.status == 302)
        #expect(try server.requests().count == 1)
        #expect(Disposition.decide(result, now: Date())
                == .permanent(reason: "HTTP 302 Found (redirect to http://localhost:\(server.port)/elsewhere not followed)"))
    }

    @Test func rateLimiterSlowsTheBodyDown() throws {
        let server = try FaultServer()
        let file = try TestFile(TestFile.pattern(192 * 1024))
        let limiter = RateLimiter(bytesPerSecond: 256 * 1024)
        let started = Date()
        let request = try Fixture.request(try Fixture.profile(port: server.port), file, rateLimiter: limiter)
        _ = try CurlTransport().send(request).get()
        #expect(Date().timeIntervalSince(started) >= 0.5)
        #expect(try server.requests().first?.body_sha256 == file.sha256.hexString)
    }

    /// A loopback port that was just free: bound, then closed, so connecting is refused.
    private func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw SystemError("bind") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

extension Disposition {
    var isRetryLater: Bool { if case .retryLater = self { return true } else { return false } }
    var isOffline: Bool { if case .offline = self { return true } else { return false } }
}
