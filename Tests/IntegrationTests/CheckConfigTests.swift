import Foundation
import Testing

/// `uploader check-config`: exit 0 with the effective config, or exit 2 with `PATH:LINE: message` lines.
@Suite struct CheckConfigTests {
    @Test func aGoodConfigExitsZeroAndPrintsEveryKeyWithSecretsRedacted() throws {
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: "http://127.0.0.1:1/{path}", extra: "auth = bearer\ntoken = ${UPLOADER_TEST_TOKEN}")
        chmod(fixture.configPath, 0o600)
        let result = try fixture.run(["check-config"], environment: ["UPLOADER_TEST_TOKEN": "s3cr3t-t0ken"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        for line in ["[uploader]", "metrics_file = ", "[outbox p]", "spool = \(fixture.spool)", "token = <redacted>",
                     "concurrency = 4", "shutdown_grace = 30s", "hook_timeout = 30s", "on_sent = "] {
            #expect(result.stdout.split(separator: "\n").contains { $0.hasPrefix(line) }, "missing \(line) in:\n\(result.stdout)")
        }
        #expect(!result.stdout.contains("s3cr3t-t0ken") && !result.stderr.contains("s3cr3t-t0ken"))
    }

    @Test func everyErrorIsReportedWithItsPathAndLineAndExitTwo() throws {
        let fixture = try ServiceFixture()
        let path = try fixture.tmp.write("bad.conf", """
            [uploader]
            log_level = loud

            [outbx q]
            spool = s

            [outbox p]
            spool = spool
            url = http://127.0.0.1:1/{nmae}
            concurency = 4
            concurrency = lots
            auth = bearer
            token_file = /nonexistent/token

            """)
        let result = try fixture.binary.run(["check-config", "--config", path])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines == [
            "\(path):2: invalid value \"loud\" for log_level (use error, warn, info or debug)",
            "\(path):4: unknown section [outbx q]; did you mean [outbox q]?",
            "\(path):9: unknown placeholder {nmae} in url; did you mean {name}?",
            "\(path):10: unknown key \"concurency\" in [outbox p]; did you mean \"concurrency\"?",
            "\(path):11: invalid number \"lots\" for concurrency (use a whole number from 1 to 1024)",
            "\(path):13: cannot read token_file /nonexistent/token: No such file or directory",
        ])
    }

    @Test func aMissingConfigFileIsAConfigurationError() throws {
        let fixture = try ServiceFixture()
        let path = fixture.tmp.path("nope.conf")
        let result = try fixture.binary.run(["check-config", "--config", path])
        #expect(result.exitCode == 2)
        #expect(result.stderr.hasPrefix("\(path): cannot read config"), "\(result.stderr)")
    }

    @Test func aWarningIsPrintedOnceWithItsPathAndTheConfigStillPasses() throws {
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: "http://127.0.0.1:1/{path}", extra: "auth = bearer\ntoken = inline-secret")
        chmod(fixture.configPath, 0o644)
        let result = try fixture.run(["check-config"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr.hasPrefix("\(fixture.configPath): warning: holds an inline secret (token on line 10)"), "\(result.stderr)")
        #expect(!result.stdout.contains("inline-secret"))
    }

    @Test func runRefusesABrokenConfigWithTheSameLinesAndExitTwo() throws {
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: "http://127.0.0.1:1/{path}", extra: "concurency = 4")
        let result = try fixture.run(["run", "--once"])
        #expect(result.exitCode == 2)
        #expect(result.stderr.contains("\(fixture.configPath):9: unknown key \"concurency\""), "\(result.stderr)")
    }
}
