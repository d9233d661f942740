import Foundation
import XCTest
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// Issue #25 (DESIGN §12): uploads and the reachability probe go through a proxy (the `proxy`
/// key, else libcurl's environment variables). Each profile's url names 127.0.0.1 and a port
/// where nothing listens: only the proxy (forwarding to the test's server) gets the bytes there.
final class ProxyTests: XCTestCase {
    /// The environment with no proxy variable of the test runner's own in the way.
    private let noProxyEnvironment = ["http_proxy": "", "https_proxy": "", "HTTPS_PROXY": "", "all_proxy": "", "ALL_PROXY": ""]

    private func statusJSON(_ fx: SpoolFixture) throws -> [String: Any] {
        let result = try fx.run(["status", "--json"])
        XCTAssertEqual(result.exitCode, 0, "\(result)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return try XCTUnwrap((object?["profiles"] as? [String: Any])?[fx.profile] as? [String: Any], result.stdout)
    }

    /// The daemon starts while the proxy is down: the profile goes offline (no attempt spent);
    /// once the proxy answers, the probe through it brings the profile back, and files arrive.
    private func comesBackOnlineThroughTheProxy(extra: (_ proxyPort: Int) -> String,
                                                environment: (_ proxyURL: String) -> [String: String]) throws {
        let sink = try NginxSink()
        let dead = try FreePort.next()
        let proxyPort = try FreePort.next()
        let fx = try SpoolFixture(url: "http://127.0.0.1:\(dead)/in/{path}", extra: "connect_timeout = 2s\n" + extra(proxyPort))
        fx.environment = noProxyEnvironment.merging(environment("http://127.0.0.1:\(proxyPort)")) { $1 }
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        let first = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try fx.drop("first.bin", first)
        try waitUntil(timeout: 15, "the profile to go offline while the proxy is down") {
            daemon.stderrText().contains("destination unreachable")
        }
        // The log line comes with the decision; the record is rewritten by the job that follows it.
        try waitUntil(timeout: 10, "first.bin's record to be queued again") {
            (try? fx.manifest("first.bin", in: fx.outbox))?.state == .queued
        }
        XCTAssertEqual(try fx.manifest("first.bin", in: fx.outbox).countedAttempts, 0, "no attempt spent while the proxy was down")

        let proxy = try ForwardProxy(upstreamPort: sink.port, port: proxyPort)
        try waitUntil(timeout: 30, "first.bin delivered through the proxy") { fx.files(in: fx.sent) == ["first.bin"] }
        let second = Data("after the proxy came up\n".utf8)
        try fx.drop("second.txt", second)
        try waitUntil(timeout: 15, "second.txt delivered") { Set(fx.files(in: fx.sent)) == ["first.bin", "second.txt"] }

        XCTAssertEqual(try sha256(ofFile: sink.file("in/first.bin")), sha256(of: first))
        XCTAssertEqual(try sha256(ofFile: sink.file("in/second.txt")), sha256(of: second))
        XCTAssertEqual(try fx.manifest("first.bin", in: fx.sent).attempts.count, 1)
        let forwarded = try proxy.forwarded()
        XCTAssertTrue(forwarded.contains { $0.method == "HEAD" && $0.target == "http://127.0.0.1:\(dead)/" },
                      "the probe went through the proxy: \(forwarded.map { "\($0.method) \($0.target)" })")
        for name in ["first.bin", "second.txt"] {
            XCTAssertTrue(forwarded.contains { $0.method == "PUT" && $0.target == "http://127.0.0.1:\(dead)/in/\(name)" && $0.status == 201 },
                          "\(name) went through the proxy")
        }
        XCTAssertTrue(daemon.stderrText().contains("destination reachable again"), daemon.stderrText())
        try waitUntil(timeout: 5, "status to show the destination reachable") { (try self.statusJSON(fx)["reachable"] as? Bool) == true }
    }

    func testWithTheProxyKeyAProfileComesBackOnlineThroughTheProxyAndDelivers() throws {
        try comesBackOnlineThroughTheProxy(extra: { "proxy = http://127.0.0.1:\($0)" }, environment: { _ in [:] })
    }

    func testWithoutTheKeyTheHttpProxyEnvironmentVariableIsUsedTheSameWay() throws {
        try comesBackOnlineThroughTheProxy(extra: { _ in "" }, environment: { ["http_proxy": $0] })
    }

    func testWithNoProxyTheDestinationIsUnreachableAndWithHttpProxyItIsNot() throws {
        let sink = try NginxSink()
        let proxy = try ForwardProxy(upstreamPort: sink.port)
        let dead = try FreePort.next()
        let fx = try SpoolFixture(url: "http://127.0.0.1:\(dead)/in/{path}", extra: "connect_timeout = 2s")
        try fx.drop("a.txt", Data("through the environment's proxy\n".utf8))
        fx.environment = noProxyEnvironment
        let direct = try fx.runOnce()
        XCTAssertEqual(direct.exitCode, 69, "nothing listens there: \(direct)")
        fx.environment["http_proxy"] = proxy.url
        let proxied = try fx.runOnce()
        XCTAssertEqual(proxied.exitCode, 0, "\(proxied)")
        XCTAssertEqual(try sha256(ofFile: sink.file("in/a.txt")), sha256(of: Data("through the environment's proxy\n".utf8)))
        XCTAssertEqual(try proxy.forwarded().filter { $0.method == "PUT" }.map(\.target), ["http://127.0.0.1:\(dead)/in/a.txt"])
    }

    func testProxyCredentialsAreSentButNeverPrintedLoggedOrStored() throws {
        let secret = "pr0xy-s3cret-42"
        let sink = try NginxSink()
        let proxy = try ForwardProxy(upstreamPort: sink.port, requireAuth: "cam7:\(secret)")
        let dead = try FreePort.next()
        let fx = try SpoolFixture(url: "http://127.0.0.1:\(dead)/in/{path}",
                                  extra: "proxy = ${SITE_PROXY}", global: "log_level = debug")
        fx.environment = noProxyEnvironment.merging(["SITE_PROXY": "http://cam7:\(secret)@127.0.0.1:\(proxy.port)"]) { $1 }

        let checked = try fx.run(["check-config"])
        XCTAssertEqual(checked.exitCode, 0, "\(checked)")
        XCTAssertTrue(checked.stdout.contains("proxy = http://<redacted>@127.0.0.1:\(proxy.port)\n"), checked.stdout)
        XCTAssertFalse(checked.stdout.contains(secret) || checked.stderr.contains(secret) || checked.stdout.contains("cam7"))

        try fx.drop("a.bin", Data(repeating: 3, count: 10_000))
        let ran = try fx.runOnce()
        XCTAssertEqual(ran.exitCode, 0, "\(ran)")
        XCTAssertFalse(ran.stderr.contains(secret) || ran.stdout.contains(secret), "the log holds the proxy's password")
        let manifest = try String(contentsOfFile: fx.sent + "/a.bin.manifest.json", encoding: .utf8)
        XCTAssertFalse(manifest.contains(secret))
        let forwarded = try proxy.forwarded()
        XCTAssertEqual(forwarded.map(\.status), [201])
        XCTAssertEqual(forwarded.first?.proxyAuthorization, "Basic " + Data("cam7:\(secret)".utf8).base64EncodedString())
    }

    func testTusUploadsGoThroughTheProxy() throws {
        let tus = try TusServer()
        let proxy = try ForwardProxy(upstreamPort: tus.port)
        let dead = try FreePort.next()
        let fx = try SpoolFixture(url: "http://127.0.0.1:\(dead)/files/",
                                  extra: "protocol = tus\ntus_chunk_size = 64KiB\nproxy = \(proxy.url)")
        fx.environment = noProxyEnvironment
        let data = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try fx.drop("clip.bin", data)
        let ran = try fx.runOnce()
        XCTAssertEqual(ran.exitCode, 0, "\(ran)")
        let manifest = try fx.manifest("clip.bin", in: fx.sent)
        let uploadURL = try XCTUnwrap(manifest.remote?.url)
        XCTAssertEqual(try tus.stored(uploadURL).sha256, sha256(of: data))
        let methods = try proxy.forwarded().map(\.method)
        XCTAssertTrue(methods.contains("POST") && methods.filter { $0 == "PATCH" }.count >= 4, "\(methods)")
    }

    func testS3UploadsGoThroughTheProxy() throws {
        let moto = try MotoServer()
        let proxy = try ForwardProxy(upstreamPort: moto.port)
        let dead = try FreePort.next()
        let fx = try SpoolFixture(url: "s3://\(moto.bucket)/site/{path}", extra: """
            s3_endpoint = http://127.0.0.1:\(dead)
            s3_path_style = yes
            access_key_id = \(moto.accessKeyID)
            secret_access_key = \(moto.secretAccessKey)
            proxy = \(proxy.url)
            """)
        fx.environment = noProxyEnvironment
        let data = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 5) })
        try fx.drop("photo.jpg", data)
        let ran = try fx.runOnce()
        XCTAssertEqual(ran.exitCode, 0, "\(ran)")
        XCTAssertEqual(try moto.object("site/photo.jpg").sha256, sha256(of: data))
        XCTAssertTrue(try proxy.forwarded().contains { $0.method == "PUT" && $0.target.hasPrefix("http://127.0.0.1:\(dead)/\(moto.bucket)/site/photo.jpg") })
    }
}
