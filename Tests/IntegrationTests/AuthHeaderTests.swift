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

/// Issue #5: bearer and basic credentials go on the wire exactly, and nowhere else.
final class AuthHeaderTests: XCTestCase {
    /// Runs one upload of `a.txt` with `auth` lines and returns the `Authorization` headers received.
    private func authorization(_ auth: String, environment: [String: String] = [:]) throws -> [String] {
        let server = try FaultServer()
        let fx = try SpoolFixture(url: server.url("{name}"), extra: auth)
        fx.environment = environment
        try fx.drop("a.txt", Data("a".utf8))
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.description)
        let requests = try server.recorded()
        XCTAssertEqual(requests.count, 1)
        return requests.first?.headerValues("Authorization") ?? []
    }

    func testBearerTokenFromTokenFileIsSentExactlyWithItsTrailingNewlineStripped() throws {
        let secrets = try TempDir(prefix: "upl-secret")
        let tokenFile = try secrets.write("api.token", "tok_live.9f8e-7d6c/AB+cd==\n")
        XCTAssertEqual(try authorization("auth = bearer\ntoken_file = \(tokenFile)"), ["Bearer tok_live.9f8e-7d6c/AB+cd=="])
    }

    func testBearerTokenFromAnEnvironmentVariableIsSentExactly() throws {
        XCTAssertEqual(try authorization("auth = bearer\ntoken = ${API_TOKEN}", environment: ["API_TOKEN": "env-token-0042"]),
                       ["Bearer env-token-0042"])
    }

    func testBasicCredentialsFromPasswordFileAreSentAsBase64OfUserColonPassword() throws {
        let secrets = try TempDir(prefix: "upl-secret")
        let passwordFile = try secrets.write("pw", "pä:ss wörd\n")
        let headers = try authorization("auth = basic\nusername = cam7\npassword_file = \(passwordFile)")
        XCTAssertEqual(headers, ["Basic " + Data("cam7:pä:ss wörd".utf8).base64EncodedString()])
    }

    func testBasicPasswordFromAnEnvironmentVariableIsSentExactly() throws {
        let headers = try authorization("auth = basic\nusername = ${UP_USER}\npassword = ${UP_PASSWORD}",
                                        environment: ["UP_USER": "robot", "UP_PASSWORD": "s3cr3t"])
        XCTAssertEqual(headers, ["Basic cm9ib3Q6czNjcjN0"])
    }

    func testNoSecretAppearsInAnyLogLineManifestSpoolFileOrCheckConfigOutput() throws {
        let token = "TOKEN-d41d8cd98f00b204e9800998ecf8427e"
        let password = "PASSWORD-0f343b0931126a20f133d67c2b018a3b"
        let secrets = try TempDir(prefix: "upl-secret")
        let tokenFile = try secrets.write("token", token + "\n")
        let server = try FaultServer()
        // A server that echoes the credentials back in its answers: the manifest keeps none of it.
        try server.script([
            ["status": 401, "body": "invalid token \(token)", "headers": ["WWW-Authenticate": "Bearer error=\"\(token)\""]],
            ["status": 201, "body": "hello \(token) session=\(password)", "headers": ["Location": "/files/\(token)", "ETag": "\"\(token)\""]],
        ])
        let fx = try SpoolFixture(url: server.url("{name}"), extra: """
            auth = bearer
            token_file = \(tokenFile)
            header.Cookie = session=${SESSION}
            """, global: "log_level = debug\nlog_format = json")
        fx.environment = ["SESSION": password]
        try fx.drop("first.txt", Data("1".utf8))
        let once = try fx.runOnce()
        try fx.drop("second.txt", Data("2".utf8))
        let daemon = try fx.startDaemon()
        try waitUntil(timeout: 15, "both files in sent/") { fx.files(in: fx.sent) == ["first.txt", "second.txt"] }
        let stopped = try XCTUnwrap(daemon.stop())
        let checked = try fx.run(["check-config"])
        let help = try fx.binary.run(["--help"])

        XCTAssertEqual(once.exitCode, 69, "a 401 leaves the file queued: \(once)")
        XCTAssertEqual(fx.files(in: fx.retry), [], "a 401 fails no file")
        let requests = try server.recorded()
        XCTAssertEqual(requests.flatMap { $0.headerValues("Authorization") }, Array(repeating: "Bearer \(token)", count: 3))
        XCTAssertEqual(requests.flatMap { $0.headerValues("Cookie") }, Array(repeating: "session=\(password)", count: 3))
        for secret in [token, password] {
            XCTAssertEqual(filesContaining(secret, under: fx.tmp.path), [], "every file under the fixture (spool, manifests, logs)")
            for (what, text) in [("run --once", once.stdout + once.stderr), ("daemon", stopped.stdout + stopped.stderr),
                                 ("check-config", checked.stdout + checked.stderr), ("--help", help.stdout + help.stderr)] {
                XCTAssertFalse(text.contains(secret), "\(what) printed a secret:\n\(text)")
            }
        }
        XCTAssertEqual(checked.exitCode, 0, checked.description)
        XCTAssertTrue(checked.stdout.contains("header.Cookie = <redacted>"), checked.stdout)
        let sent = try XCTUnwrap(try ["first.txt", "second.txt"].map { try fx.manifest($0, in: fx.sent) }.first { $0.remote?.httpStatus == 201 })
        XCTAssertTrue(sent.remote?.response?.hasPrefix("hello ") ?? false, "the rest of the answer is kept")
    }
}
