import Foundation
import Testing

/// `--help` and `help COMMAND` compared with the committed texts in Tests/Fixtures/help/
/// (`@@VERSION@@` stands for the version). After a deliberate change, regenerate them with
/// `UPDATE_HELP_SNAPSHOTS=1 swift test --filter HelpTextSnapshotTests`.
@Suite struct HelpTextSnapshotTests {
    static let cases: [(arguments: [String], snapshot: String)] = [
        (["--help"], "overview.txt"),
        (["help", "run"], "run.txt"),
        (["help", "status"], "status.txt"),
        (["help", "retry"], "retry.txt"),
        (["help", "enqueue"], "enqueue.txt"),
        (["help", "check-config"], "check-config.txt"),
        (["run", "--help"], "run.txt"),
    ]

    @Test(arguments: 0..<cases.count)
    func helpTextMatchesItsCommittedSnapshot(index: Int) throws {
        let (arguments, snapshot) = Self.cases[index]
        let binary = try UploaderBinary()
        let result = try binary.run(arguments)
        #expect(result.exitCode == 0, "\(result)")
        let version = try binary.run(["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "uploader ", with: "")
        let actual = result.stdout.replacingOccurrences(of: version, with: "@@VERSION@@")
        let path = PackagePaths.root + "/Tests/Fixtures/help/" + snapshot
        if ProcessInfo.processInfo.environment["UPDATE_HELP_SNAPSHOTS"] == "1" {
            try actual.write(toFile: path, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOfFile: try PackagePaths.fixture("help/" + snapshot), encoding: .utf8)
        #expect(actual == expected, "uploader \(arguments.joined(separator: " ")) differs from \(snapshot)")
    }

    @Test func helpForAnUnknownCommandIsAUsageError() throws {
        let result = try UploaderBinary().run(["help", "frobnicate"])
        #expect(result.exitCode == 64)
        #expect(result.stderr.contains("unknown command \"frobnicate\""), "\(result.stderr)")
    }

    @Test func everyOptionOfEveryCommandAppearsInItsHelp() throws {
        let binary = try UploaderBinary()
        let options = ["run": ["--config", "--profile", "--once"], "status": ["--config", "--profile", "--json", "--check", "--expect-daemon", "--warn-queued",
                                                                   "--crit-queued", "--warn-age", "--crit-age", "--warn-failed", "--crit-failed"],
                       "retry": ["--config", "--profile", "--all"], "enqueue": ["--config", "--profile", "--move"],
                       "check-config": ["--config"]]
        for (command, flags) in options {
            let text = try binary.run(["help", command]).stdout
            for flag in flags { #expect(text.contains(flag), "\(flag) missing from help \(command)") }
        }
    }
}
