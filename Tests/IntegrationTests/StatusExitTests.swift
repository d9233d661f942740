@preconcurrency import Glibc
import Foundation
import Testing

/// `status` exits non-zero exactly when something needs an operator (2 failed files, 3 a pause
/// only an operator ends, 4 a daemon that should run and does not, 5 a spool it cannot read),
/// and `status --check` speaks the Monitoring Plugins language: one line, 0/1/2/3.
@Suite struct StatusExitTests {
    private func fixture(url: String = "http://127.0.0.1:1/{path}", extra: String = "") throws -> ServiceFixture {
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: url, extra: extra)
        for area in ["outbox", "sent", "retry"] {
            try FileManager.default.createDirectory(atPath: fixture.spool + "/" + area, withIntermediateDirectories: true)
        }
        return fixture
    }

    @Test func aHealthySpoolExitsZeroAndTheCheckSaysOKWithPerformanceData() throws {
        let fx = try fixture()
        try fx.drop("a.bin", Data(repeating: 1, count: 100))
        let status = try fx.run(["status"])
        #expect(status.exitCode == 0, "\(status)")
        #expect(!status.stdout.contains("ATTENTION"), "\(status.stdout)")
        let check = try fx.run(["status", "--check"])
        #expect(check.exitCode == 0, "\(check)")
        #expect(check.stdout.hasPrefix("UPLOADER OK - 1 queued, 0 in retry, 0 failed | 'queued'=1;;;0 'queued_bytes'=100B;;;0 "
                                       + "'uploading'=0;;;0 'retry'=0;;;0 'failed'=0;0;;0 'sent_24h'=0;;;0 'oldest_queued'="), "\(check.stdout)")
        #expect(check.stdout.split(separator: "\n").count == 1, "one line: \(check.stdout)")
    }

    @Test func filesFailedForGoodExitTwoAndWarnUnlessTheThresholdsSayOtherwise() throws {
        let fx = try fixture()
        try fx.layOut("retry", "d.bin", size: 40, state: "failed", lastError: "HTTP 404 Not Found", attempts: 1)
        let status = try fx.run(["status"])
        #expect(status.exitCode == 2, "\(status)")
        #expect(status.stdout.contains("ATTENTION   1 file failed for good; see retry/, then: uploader retry --profile p --all"),
                "\(status.stdout)")
        let json = try fx.run(["status", "--json"])
        #expect(json.exitCode == 2)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let problems = try #require(object["problems"] as? [[String: Any]])
        #expect(problems.map { $0["problem"] as? String } == ["failed"] && problems.first?["exit_status"] as? Int == 2, "\(problems)")

        let warning = try fx.run(["status", "--check"])
        #expect(warning.exitCode == 1, "\(warning)")
        #expect(warning.stdout.hasPrefix("UPLOADER WARNING - 1 failed | "), "\(warning.stdout)")
        #expect(try fx.run(["status", "--check", "--crit-failed", "0"]).exitCode == 2)
        #expect(try fx.run(["status", "--check", "--warn-failed", "1"]).exitCode == 0)
    }

    @Test func queueLengthAndAgeThresholdsRaiseWarningAndCritical() throws {
        let fx = try fixture()
        for name in ["a.bin", "b.bin"] { try fx.age(try fx.drop(name, Data("x".utf8)), seconds: 600) }
        let warned = try fx.run(["status", "--check", "--warn-queued", "1", "--crit-queued", "5"])
        #expect(warned.exitCode == 1, "\(warned)")
        #expect(warned.stdout.hasPrefix("UPLOADER WARNING - 2 queued | 'queued'=2;1;5;0 "), "\(warned.stdout)")
        #expect(try fx.run(["status", "--check", "--crit-queued", "1"]).exitCode == 2)
        let old = try fx.run(["status", "--check", "--warn-age", "1m", "--crit-age", "1h"])
        #expect(old.exitCode == 1, "\(old)")
        #expect(old.stdout.contains("oldest queued 10m") && old.stdout.contains(";60;3600;0"), "\(old.stdout)")
        #expect(try fx.run(["status", "--check", "--crit-age", "5m"]).exitCode == 2)
        #expect(try fx.run(["status", "--check", "--warn-age", "1h"]).exitCode == 0)
        // A status (not --check) does not judge the queue: nothing here needs an operator.
        #expect(try fx.run(["status"]).exitCode == 0)
    }

    @Test func aSpoolThatDoesNotExistExitsFiveAndIsUnknownToACheck() throws {
        let fx = try ServiceFixture()
        try fx.writeConfig(url: "http://127.0.0.1:1/{path}")
        let status = try fx.run(["status"])
        #expect(status.exitCode == 5, "\(status)")
        #expect(status.stderr.contains("uploader: cannot list \(fx.outbox): No such file or directory"), "\(status.stderr)")
        let check = try fx.run(["status", "--check"])
        #expect(check.exitCode == 3, "\(check)")
        #expect(check.stdout.hasPrefix("UPLOADER UNKNOWN - cannot list \(fx.outbox): No such file or directory"), "\(check.stdout)")
    }

    @Test func aDaemonKilledWithoutACleanExitIsDownUntilOneRunsAgain() throws {
        let fx = try fixture()
        let daemon = try fx.startDaemon()
        #expect(try fx.run(["status", "--expect-daemon"]).exitCode == 0)
        daemon.kill9()
        _ = try daemon.waitForExit()
        let down = try fx.run(["status"])
        #expect(down.exitCode == 4, "\(down)")
        #expect(down.stdout.contains("ATTENTION   the daemon (pid \(daemon.pid)) stopped without a clean exit (crashed or killed); start it again"),
                "\(down.stdout)")
        let check = try fx.run(["status", "--check"])
        #expect(check.exitCode == 2 && check.stdout.hasPrefix("UPLOADER CRITICAL - the daemon (pid \(daemon.pid)) stopped"), "\(check)")

        // A clean stop removes the state file: nothing is expected any more, unless asked.
        let again = try fx.startDaemon()
        #expect(try stopDaemon(again).exitCode == 0)
        #expect(!fx.exists(".state.json"))
        #expect(try fx.run(["status"]).exitCode == 0)
        let expected = try fx.run(["status", "--expect-daemon"])
        #expect(expected.exitCode == 4 && expected.stdout.contains("ATTENTION   no daemon is running on \(fx.spool)"), "\(expected)")
        #expect(try fx.run(["status", "--check", "--expect-daemon"]).exitCode == 2)
    }

    @Test func severalProfilesLabelTheirPerformanceDataAndTheWorstProblemWins() throws {
        let fx = try ServiceFixture()
        let config = try fx.tmp.write("two.conf", """
            [outbox a]
            spool = spool-a
            url = http://127.0.0.1:1/{path}

            [outbox b]
            spool = spool-b
            url = http://127.0.0.1:1/{path}

            """)
        for area in ["outbox", "sent", "retry"] {
            try FileManager.default.createDirectory(atPath: fx.tmp.path("spool-a/" + area), withIntermediateDirectories: true)
        }
        let status = try fx.binary.run(["status", "--config", config])
        #expect(status.exitCode == 5, "b's spool is missing: \(status)")
        let check = try fx.binary.run(["status", "--check", "--config", config])
        #expect(check.exitCode == 3, "\(check)")
        #expect(check.stdout.hasPrefix("UPLOADER UNKNOWN - b: cannot list "), "\(check.stdout)")
        #expect(check.stdout.contains(" 'a_queued'=0;;;0 ") && check.stdout.contains(" 'b_failed'=0;0;;0 "), "\(check.stdout)")
    }

    @Test func aCheckCalledWronglyOrOnABrokenConfigIsUnknown() throws {
        let fx = try fixture()
        let usage = try fx.run(["status", "--check", "--warn-queued", "lots"])
        #expect(usage.exitCode == 3, "\(usage)")
        #expect(usage.stdout.hasPrefix("UPLOADER UNKNOWN - --warn-queued needs a whole number"), "\(usage.stdout)")
        #expect(try fx.run(["status", "--warn-queued", "3"]).exitCode == 64, "a threshold without --check")
        try fx.writeConfig(url: "http://127.0.0.1:1/{path}", extra: "concurency = 4")
        let broken = try fx.run(["status", "--check"])
        #expect(broken.exitCode == 3, "\(broken)")
        #expect(broken.stdout.hasPrefix("UPLOADER UNKNOWN - configuration error in "), "\(broken.stdout)")
        #expect(try fx.run(["status"]).exitCode == 78)
    }

    @Test func statusEnqueueAndRetryNeedNoSecretWhileRunAndCheckConfigDo() throws {
        let fx = try fixture(extra: "auth = bearer\ntoken_file = /nonexistent/photos.token")
        #expect(try fx.run(["status"]).exitCode == 0)
        let source = try fx.tmp.write("in.txt", "hello\n")
        let enqueue = try fx.run(["enqueue", "--profile", "p", source])
        #expect(enqueue.exitCode == 0, "\(enqueue)")
        #expect(fx.exists("outbox/in.txt"))
        try fx.layOut("retry", "r.bin", size: 3, state: "failed", attempts: 1)
        let retry = try fx.run(["retry", "--all"])
        #expect(retry.exitCode == 0, "\(retry)")
        #expect(fx.exists("outbox/r.bin"))
        for command in [["check-config"], ["run", "--once"]] {
            let refused = try fx.run(command)
            #expect(refused.exitCode == 78, "\(command): \(refused)")
            #expect(refused.stderr.contains("cannot read token_file /nonexistent/photos.token"), "\(command): \(refused.stderr)")
        }

        // The same with the secret in a variable only the service's environment has.
        try fx.writeConfig(url: "http://127.0.0.1:1/{path}", extra: "auth = bearer\ntoken = ${UPLOADER_TEST_UNSET_TOKEN}")
        #expect(try fx.run(["status"]).exitCode == 0)
        #expect(try fx.run(["enqueue", "--profile", "p", source]).exitCode == 0)
        let check = try fx.run(["check-config"])
        #expect(check.exitCode == 78 && check.stderr.contains("environment variable UPLOADER_TEST_UNSET_TOKEN is not set"), "\(check)")
    }

    @Test func aMonitoringUserWhoMayNotReadTheTokenGetsStatusAndTheCheck() throws {
        let fx = try fixture()
        let token = try fx.tmp.write("photos.token", "s3cr3t\n")
        #expect(chmod(token, 0o600) == 0)
        try fx.writeConfig(url: "http://127.0.0.1:1/{path}", extra: "auth = bearer\ntoken_file = \(token)")
        #expect(chmod(fx.tmp.path, 0o755) == 0 && chmod(fx.configPath, 0o644) == 0)
        let binary = fx.tmp.path("uploader")
        #expect(try ProcessRunner.run(["cp", fx.binary.path, binary]).exitCode == 0)
        func asNobody(_ arguments: [String]) throws -> ProcessResult {
            try ProcessRunner.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", binary]
                                  + arguments + ["--config", fx.configPath], timeout: 60)
        }
        let status = try asNobody(["status"])
        #expect(status.exitCode == 0, "\(status)")
        let check = try asNobody(["status", "--check"])
        #expect(check.exitCode == 0 && check.stdout.hasPrefix("UPLOADER OK - "), "\(check)")
        let refused = try asNobody(["check-config"])
        #expect(refused.exitCode == 78 && refused.stderr.contains("cannot read token_file \(token): Permission denied"), "\(refused)")
    }
}
