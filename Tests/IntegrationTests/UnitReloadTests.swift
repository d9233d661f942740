@preconcurrency import Glibc
import Foundation
import Testing
@testable import UploaderDaemon

/// Issue #25: `systemctl reload uploader` fails on a broken config. The unit's `ExecReload=`
/// commands run here as systemd runs them — in order, stopping at the first that fails — with
/// the packaged paths pointed at the built binary and a test config and `$MAINPID` at a
/// running daemon: a broken config fails the reload and never reaches the daemon, a good one
/// is applied, and check-config's output stays out of the journal.
@Suite struct UnitReloadTests {
    static let unit = PackagePaths.root + "/examples/systemd/uploader.service"

    @Test func aBrokenConfigFailsTheReloadWithItsErrorAndTheDaemonIsNotSignalled() throws {
        let fixture = try ServiceFixture()
        let url = "http://127.0.0.1:\(try FreePort.next())/{path}"
        try fixture.writeConfig(url: url)
        let daemon = try fixture.startDaemon()

        // Line 9 of the file ServiceFixture.writeConfig writes is the first `extra` line.
        try fixture.writeConfig(url: url, extra: "concurency = 4")
        let ran = try reload(daemon, fixture)
        let failed = try #require(ran.last)
        #expect(ran.count == 1, "the command after the failed check ran: \(ran)")
        #expect(failed.exitCode == 78, "\(failed)")
        #expect(failed.stderr.contains("\(fixture.configPath):9: unknown key \"concurency\""), "\(failed)")
        #expect(!daemon.stderrText().contains("SIGHUP"), "the daemon was signalled: \(daemon.stderrText())")
        #expect(daemon.isRunning)
        #expect(try stopDaemon(daemon).exitCode == 0)
    }

    @Test func aGoodConfigIsCheckedQuietlyThenReloadedBySIGHUP() throws {
        let fixture = try ServiceFixture()
        let url = "http://127.0.0.1:\(try FreePort.next())/{path}"
        try fixture.writeConfig(url: url)
        try FieldDeployment.giveSpoolToServiceUser(fixture.spool, in: fixture.tmp.path)
        let daemon = try fixture.startDaemon()

        try fixture.writeConfig(url: url, extra: "max_attempts = 3")
        let ran = try reload(daemon, fixture)
        #expect(ran.count >= 2 && ran.allSatisfy { $0.exitCode == 0 }, "\(ran)")
        #expect(ran.allSatisfy { $0.stdout.isEmpty && $0.stderr.isEmpty }, "a reload's commands printed something: \(ran)")
        try waitUntil(timeout: 15, "the reload to be logged") { daemon.stderrText().contains("configuration reloaded") }
        #expect(daemon.stderrText().contains("restarted=p"), "\(daemon.stderrText())")
        #expect(try stopDaemon(daemon).exitCode == 0)
    }

    @Test func exitStatusesNoRestartCanFixAreNotRestarted() throws {
        let lines = try String(contentsOfFile: Self.unit, encoding: .utf8).split(separator: "\n")
        let prevented = lines.filter { $0.hasPrefix("RestartPreventExitStatus=") }
            .flatMap { $0.dropFirst("RestartPreventExitStatus=".count).split(separator: " ").compactMap { Int32($0) } }
        #expect(Set(prevented) == [Daemon.ExitCode.usage, Daemon.ExitCode.cannotCreate, Daemon.ExitCode.tempFail,
                                   Daemon.ExitCode.noPermission, Daemon.ExitCode.config])
        #expect(lines.contains("Restart=on-failure"))
    }

    /// Runs the unit's `ExecReload=` commands in order until one fails; returns what ran.
    private func reload(_ daemon: RunningProcess, _ fixture: ServiceFixture) throws -> [ProcessResult] {
        var ran: [ProcessResult] = []
        for command in try Self.reloadCommands(mainPID: daemon.pid, binary: fixture.binary.path, config: fixture.configPath) {
            let result = try ProcessRunner.run(command, timeout: 30)
            ran.append(result)
            if result.exitCode != 0 { break }
        }
        return ran
    }

    /// Each `ExecReload=` line, its prefixes dropped, split into words as systemd splits them (single or double
    /// quotes group, `$MAINPID` as a word of its own is the main pid), the packaged binary and
    /// config replaced by the given ones.
    static func reloadCommands(mainPID: Int32, binary: String, config: String) throws -> [[String]] {
        let lines = try String(contentsOfFile: unit, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("ExecReload=") }
        #expect(lines.count >= 2, "\(lines)")
        return lines.map { line in
            // systemd's prefixes ("+": as root, outside the sandbox) say how, not what, to run.
            words(String(line.dropFirst("ExecReload=".count).drop { "+-@!:".contains($0) })).map { word in
                word == "$MAINPID" ? String(mainPID) : word
                    .replacingOccurrences(of: "/usr/bin/uploader", with: binary)
                    .replacingOccurrences(of: "/etc/uploader/uploader.conf", with: config)
            }
        }
    }

    private static func words(_ line: String) -> [String] {
        var words: [String] = []
        var current: String?
        var quote: Character?
        for character in line {
            if let open = quote {
                if character == open { quote = nil } else { current!.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                current = current ?? ""
            } else if character == " " {
                if let word = current { words.append(word) }
                current = nil
            } else {
                current = (current ?? "") + String(character)
            }
        }
        if let word = current { words.append(word) }
        return words
    }
}
