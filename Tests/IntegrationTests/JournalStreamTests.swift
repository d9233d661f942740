@preconcurrency import Glibc
import Foundation
import Testing

/// Issue #25: the built binary, its stderr a file; when `JOURNAL_STREAM` names that very file
/// (as systemd sets it for a unit whose stderr is the journal), every line starts with the
/// syslog priority of its level and carries no timestamp; when it names another file, the
/// lines are as they always were.
@Suite struct JournalStreamTests {
    /// `2026-11-29T12:51:19.343Z`, anywhere in a line.
    private static var timestamp: Regex<Substring> { #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/# }

    /// A `run --once` that logs at every level but error: debug and info lines, and a warning
    /// (the destination, a loopback port nobody listens on, is unreachable: exit 69).
    private func runOnce(format: String, journalMatches: Bool) throws -> [String] {
        let tmp = try TempDir()
        _ = try tmp.write("spool/outbox/report.txt", "queued\n")
        let config = try tmp.write("uploader.conf", """
            [uploader]
            log_level = debug
            log_format = \(format)

            [outbox journal]
            spool = spool
            url = http://127.0.0.1:\(try FreePort.next())/up/{path}

            """)
        let (result, lines) = try run(["run", "--once", "--config", config], in: tmp, journalMatches: journalMatches)
        #expect(result.exitCode == 69, "\(result)")
        return lines
    }

    @Test func textLinesForTheJournalStartWithTheirPriorityAndHaveNoTimestamp() throws {
        let lines = try runOnce(format: "text", journalMatches: true)
        for (prefix, level) in [("<7>", "DEBUG"), ("<6>", "INFO"), ("<4>", "WARN")] {
            #expect(lines.contains { $0.hasPrefix(prefix + level + " ") }, "no \(prefix)\(level) line in \(lines)")
        }
        #expect(lines.contains { $0.hasPrefix("<4>WARN destination unreachable") }, "\(lines)")
        for line in lines {
            let prefix = ["<7>DEBUG ", "<6>INFO ", "<4>WARN ", "<3>ERROR "].first { line.hasPrefix($0) }
            #expect(prefix != nil, "a line without its priority and level: \(line)")
            #expect(line.firstMatch(of: Self.timestamp) == nil, "a timestamp in a journal line: \(line)")
        }
    }

    @Test func jsonLinesForTheJournalAreThePriorityThenAnObjectWithoutTime() throws {
        let lines = try runOnce(format: "json", journalMatches: true)
        #expect(!lines.isEmpty)
        let priorities = ["error": "<3>", "warn": "<4>", "info": "<6>", "debug": "<7>"]
        var levels = Set<String>()
        for line in lines {
            let prefix = try #require(line.firstMatch(of: #/^<\d>/#), "no priority: \(line)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.dropFirst(prefix.output.count).utf8)) as? [String: Any], "\(line)")
            let level = try #require(object["level"] as? String, "\(line)")
            #expect(String(prefix.output) == priorities[level], "\(line)")
            #expect(object["time"] == nil, "a time field in a journal line: \(line)")
            levels.insert(level)
        }
        #expect(levels == ["debug", "info", "warn"], "\(lines)")
    }

    @Test func errorsThatStopTheDaemonAndConfigErrorsAreFiledAsErrors() throws {
        let tmp = try TempDir()
        let good = try tmp.write("uploader.conf", """
            [outbox journal]
            spool = spool
            url = http://127.0.0.1:\(try FreePort.next())/up/{path}

            """)
        try FieldDeployment.giveSpoolToServiceUser(tmp.path("spool"), in: tmp.path)
        let unknown = try run(["run", "--once", "--profile", "nope", "--config", good], in: tmp, journalMatches: true)
        #expect(unknown.result.exitCode == 64, "\(unknown.result)")
        #expect(unknown.lines == ["<3>uploader: no profile named \"nope\" in \(good)"])

        let broken = try tmp.write("broken.conf", "[outbox journal]\nspool = spool\nurl = ftp://example.invalid/\n")
        let check = try run(["check-config", "--config", broken], in: tmp, journalMatches: true)
        #expect(check.result.exitCode == 78, "\(check.result)")
        #expect(!check.lines.isEmpty)
        for line in check.lines {
            #expect(line.hasPrefix("<3>\(broken):3: "), "\(line)")
        }
    }

    @Test func aJournalStreamNamingAnotherFileLeavesLinesAsTheyWere() throws {
        let lines = try runOnce(format: "text", journalMatches: false)
        #expect(!lines.isEmpty)
        for line in lines {
            #expect(line.firstMatch(of: #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARN|ERROR) /#) != nil,
                    "not a timestamped line: \(line)")
        }
    }

    /// Runs `uploader ARGS` with stderr appended to a file made beforehand (so its inode is
    /// known), and `JOURNAL_STREAM` set to that file's `device:inode` — or, when
    /// `journalMatches` is false, to the same device and another inode.
    private func run(_ arguments: [String], in tmp: TempDir, journalMatches: Bool) throws -> (result: ProcessResult, lines: [String]) {
        let log = try tmp.write("stderr-\(UUID().uuidString).log", "")
        var info = stat()
        try #require(stat(log, &info) == 0)
        let stream = "\(info.st_dev):\(UInt64(info.st_ino) + (journalMatches ? 0 : 1))"
        let result = try ProcessRunner.run(
            ["sh", "-c", #"exec "$0" "$@" 2>>"$UPLOADER_TEST_STDERR""#, try UploaderBinary().path] + arguments,
            environment: ["JOURNAL_STREAM": stream, "UPLOADER_TEST_STDERR": log], currentDirectory: tmp.path, timeout: 60)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        return (result, text.split(separator: "\n").map(String.init))
    }
}
