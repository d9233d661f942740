import Foundation
import Testing

/// `uploader check-config`: exit 0 with the effective config, or exit 78 (EX_CONFIG) with `PATH:LINE: message` lines.
@Suite struct CheckConfigTests {
    @Test func aGoodConfigExitsZeroAndPrintsEveryKeyWithSecretsRedacted() throws {
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: "http://127.0.0.1:1/{path}", extra: "auth = bearer\ntoken = ${UPLOADER_TEST_TOKEN}")
        chmod(fixture.configPath, 0o600)
        try FieldDeployment.giveSpoolToServiceUser(fixture.spool, in: fixture.tmp.path)
        let result = try fixture.run(["check-config"], environment: ["UPLOADER_TEST_TOKEN": "s3cr3t-t0ken"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        for line in ["[uploader]", "metrics_file = ", "[outbox p]", "spool = \(fixture.spool)", "token = <redacted>",
                     "concurrency = 4", "shutdown_grace = 30s", "hook_timeout = 30s", "on_sent = "] {
            #expect(result.stdout.split(separator: "\n").contains { $0.hasPrefix(line) }, "missing \(line) in:\n\(result.stdout)")
        }
        #expect(!result.stdout.contains("s3cr3t-t0ken") && !result.stderr.contains("s3cr3t-t0ken"))
    }

    @Test func everyErrorIsReportedWithItsPathAndLineAndExit78() throws {
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
        #expect(result.exitCode == 78, "\(result)")
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
        #expect(result.exitCode == 78)
        #expect(result.stderr.hasPrefix("\(path): cannot read config"), "\(result.stderr)")
    }

    @Test func aWarningIsPrintedOnceWithItsPathAndTheConfigStillPasses() throws {
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: "http://127.0.0.1:1/{path}", extra: "auth = bearer\ntoken = inline-secret")
        chmod(fixture.configPath, 0o644)
        try FieldDeployment.giveSpoolToServiceUser(fixture.spool, in: fixture.tmp.path)
        let result = try fixture.run(["check-config"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr.hasPrefix("\(fixture.configPath): warning: holds a secret as written (token on line 10)"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(!result.stdout.contains("inline-secret"))
    }

    @Test func runRefusesABrokenConfigWithTheSameLinesAndExit78() throws {
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: "http://127.0.0.1:1/{path}", extra: "concurency = 4")
        let result = try fixture.run(["run", "--once"])
        #expect(result.exitCode == 78)
        #expect(result.stderr.contains("\(fixture.configPath):9: unknown key \"concurency\""), "\(result.stderr)")
    }

    @Test func theFileReadIsNamedOnTheFirstLineAndUploaderConfigIsUsedWithoutConfig() throws {
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: "http://127.0.0.1:1/{path}")
        let named = try fixture.binary.run(["check-config"], environment: ["UPLOADER_CONFIG": fixture.configPath])
        #expect(named.exitCode == 0, "\(named)")
        #expect(named.stdout.hasPrefix("# config: \(fixture.configPath)\n[uploader]\n"), "\(named.stdout)")
        let relative = try fixture.binary.run(["check-config", "--config", "uploader.conf"], currentDirectory: fixture.tmp.path)
        #expect(relative.stdout.hasPrefix("# config: \(fixture.configPath)\n"), "the absolute path: \(relative.stdout)")
    }

    @Test func theWorkingDirectoryIsNeverSearchedForAConfig() throws {
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: "http://127.0.0.1:1/{path}")
        // ./uploader.conf is right there; without --config or $UPLOADER_CONFIG the system file is the one read.
        let result = try fixture.binary.run(["check-config"], environment: ["UPLOADER_CONFIG": ""], currentDirectory: fixture.tmp.path)
        #expect(!result.stdout.contains(fixture.configPath), "\(result)")
        #expect((result.stdout + result.stderr).contains("/etc/uploader/uploader.conf"), "\(result)")
    }

    @Test func aDirectoryGivenAsTheConfigIsAConfigurationError() throws {
        let fixture = try ServiceFixture()
        let directory = fixture.tmp.path("uploader.conf.d")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for command in [["check-config"], ["run", "--once"], ["status"], ["enqueue", "--profile", "p", "/etc/hostname"]] {
            let result = try fixture.binary.run(command + ["--config", directory])
            #expect(result.exitCode == 78, "\(command): \(result)")
            #expect(result.stderr == "\(directory): cannot read config: is a directory\n", "\(command): \(result.stderr)")
        }
    }
}
