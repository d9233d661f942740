@preconcurrency import Glibc
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

/// Issue #6: a token reaches the server's Authorization header and nowhere else — not in
/// any command's output, log line, manifest or spool file, even when the server echoes it.
final class SecretsNeverLeakTests: XCTestCase {
    static let token = "tok-9f3a-SECRET-b7c1"

    private enum Source { case inlineVariable, tokenFile }

    /// Two profiles with the token: `t` to nginx, `echo` to a fault server that echoes request headers.
    private func fixture(_ source: Source, sink: NginxSink, echo: FaultServer) throws -> SpoolFixture {
        let auth: String
        switch source {
        case .inlineVariable: auth = "auth = bearer\ntoken = ${UPL_TEST_TOKEN}"
        case .tokenFile: auth = "auth = bearer\ntoken_file = secrets/token"
        }
        let fx = try SpoolFixture(url: sink.url("{path}"), extra: """
            \(auth)

            [outbox echo]
            spool = spool-echo
            url = \(echo.url("{path}"))
            \(auth)
            """)
        let tokenFile = try fx.tmp.write("secrets/token", Self.token + "\n")
        XCTAssertEqual(chmod(tokenFile, 0o600), 0)
        _ = try fx.tmp.mkdir("spool-echo/outbox")
        return fx
    }

    private func everyCommandsOutput(_ source: Source) throws {
        let sink = try NginxSink()
        let echo = try FaultServer()
        try echo.script([["echo_headers": true, "status": 400], ["echo_headers": true, "status": 201]])
        let fx = try fixture(source, sink: sink, echo: echo)
        let env = ["UPL_TEST_TOKEN": Self.token]
        try fx.drop("a.txt", Data("to nginx".utf8))
        try fx.tmp.write("spool-echo/outbox/b.txt", "to the echoing server")
        let extra = try fx.tmp.write("elsewhere/c.txt", "enqueued")
        var outputs: [ProcessResult] = []
        func run(_ args: [String], expect code: Int32) throws {
            let result = try fx.binary.run(args + ["--config", fx.config], environment: env, timeout: 60)
            XCTAssertEqual(result.exitCode, code, "\(result)")
            outputs.append(result)
        }
        try run(["check-config"], expect: 0)
        try run(["run", "--once"], expect: 1)  // b.txt: 400 → failed
        try run(["status"], expect: 2)  // b.txt failed for good
        try run(["status", "--json"], expect: 2)
        try run(["retry", "--profile", "echo", "--all"], expect: 0)
        try run(["retry", "no-such-file"], expect: 1)
        try run(["enqueue", "--profile", "t", extra], expect: 0)
        try run(["run", "--once", "--profile", "nope"], expect: 64)
        try run(["run", "--once"], expect: 0)  // b.txt: 201 this time; c.txt too
        try run(["status", "--json"], expect: 0)
        for args in [["--help"], ["help", "run"], ["help", "check-config"], ["--version"]] {
            let result = try fx.binary.run(args, environment: env)
            XCTAssertEqual(result.exitCode, 0)
            outputs.append(result)
        }
        // The daemon as a service, too, stopped by SIGTERM.
        try fx.drop("d.txt", Data("daemon".utf8))
        let daemon = try fx.binary.start(["run", "--config", fx.config], environment: env, outputDirectory: fx.tmp.path("."))
        try waitUntil(timeout: 15, "d.txt in sent/") { fx.files(in: fx.sent).contains("d.txt") }
        if let stopped = daemon.stop() { outputs.append(stopped) }

        // The token was really used…
        XCTAssertEqual(try echo.requests().compactMap { ($0["headers"] as? [[String]])?.first { $0[0] == "Authorization" }?[1] },
                       ["Bearer \(Self.token)", "Bearer \(Self.token)"])
        XCTAssertEqual(Set(fx.files(in: fx.sent)), ["a.txt", "c.txt", "d.txt"])
        XCTAssertTrue(try fx.manifest("b.txt", in: fx.tmp.path("spool-echo/sent")).remote?.response?.contains("Authorization: Bearer <redacted>") ?? false,
                      "the echoed header is kept, scrubbed")
        // …and shows up nowhere.
        for result in outputs {
            XCTAssertFalse(result.stdout.contains(Self.token), "stdout of \(result.command): \(result.stdout)")
            XCTAssertFalse(result.stderr.contains(Self.token), "stderr of \(result.command): \(result.stderr)")
        }
        let needle = Data(Self.token.utf8)
        let root = URL(fileURLWithPath: fx.tmp.path)
        var checked = 0
        for case let url as URL in FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)! {
            guard url.path != fx.tmp.path("secrets/token"), url.path != fx.tmp.path("uploader"),
                  (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true,
                  let data = try? Data(contentsOf: url) else { continue }
            checked += 1
            XCTAssertNil(data.range(of: needle), "the token is in \(url.path)")
        }
        XCTAssertGreaterThan(checked, 10, "the spools' files were searched")
    }

    func testAnInlineTokenFromTheEnvironmentAppearsInNoOutputAndNoSpoolFile() throws {
        try everyCommandsOutput(.inlineVariable)
    }

    func testATokenFileAppearsInNoOutputAndNoSpoolFile() throws {
        try everyCommandsOutput(.tokenFile)
    }

    /// A config others can read is a leak only when it holds the secret as written: `${VAR}` names a
    /// variable, not the secret, so the same file with the token in it is warned about and this is not.
    func testAConfigReadableByOthersWithAnInlineSecretIsWarnedAboutByRunAndCheckConfig() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{path}"), extra: "auth = bearer\ntoken = ${UPL_TEST_TOKEN}")
        let env = ["UPL_TEST_TOKEN": Self.token]
        // Other users must be able to reach the file for it to be readable by them at all.
        let directory = (fx.config as NSString).deletingLastPathComponent
        try FieldDeployment.giveSpoolToServiceUser(fx.spool, in: directory)
        XCTAssertEqual(chmod(fx.config, 0o644), 0)
        let variable = try fx.binary.run(["check-config", "--config", fx.config], environment: env)
        XCTAssertEqual(variable.exitCode, 0, variable.stderr)
        XCTAssertEqual(variable.stderr, "", "a ${VAR} secret in a readable config is no leak")

        let text = try String(contentsOfFile: fx.config, encoding: .utf8)
        try text.replacingOccurrences(of: "token = ${UPL_TEST_TOKEN}", with: "token = \(Self.token)")
            .write(toFile: fx.config, atomically: false, encoding: .utf8)
        let warning = "\(fx.config): warning: holds a secret as written (token on line 8) and \(fx.config) is readable by every user (mode 0644"
        let check = try fx.binary.run(["check-config", "--config", fx.config])
        XCTAssertEqual(check.exitCode, 0, check.stderr)
        XCTAssertTrue(check.stderr.hasPrefix(warning), check.stderr)
        XCTAssertTrue(check.stderr.contains("or make it 0600 root:root and give it by LoadCredential="), check.stderr)
        XCTAssertEqual(check.stderr.split(separator: "\n").count, 1, check.stderr)
        let run = try fx.binary.run(["run", "--once", "--config", fx.config])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        XCTAssertEqual(run.stderr.split(separator: "\n").filter { $0.contains(" WARN ") && $0.contains("holds a secret as written") }.count, 1,
                       run.stderr)
        XCTAssertEqual(chmod(fx.config, 0o600), 0)
        let quiet = try fx.binary.run(["check-config", "--config", fx.config])
        XCTAssertEqual(quiet.stderr, "", "no warning once only the owner can read it")
        XCTAssertFalse((variable.stdout + check.stdout + check.stderr + run.stderr + quiet.stdout).contains(Self.token))
    }
}
