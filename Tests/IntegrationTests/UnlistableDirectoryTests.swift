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

/// A spool directory the program may not list is reported, never skipped in silence: the
/// daemon logs one warning naming it and the errno text; `status` and `retry` say so on stderr once.
final class UnlistableDirectoryTests: XCTestCase {
    /// A spool owned by `nobody` whose `retry/locked/` (holding one failed file) only root may list,
    /// and a copy of the binary `nobody` may run (root lists everything: as root the test would prove nothing).
    private func lockedSpool() throws -> (fx: SpoolFixture, binary: String, locked: String) {
        let fx = try SpoolFixture(url: "http://127.0.0.1:\(try FreePort.next())/{path}")
        XCTAssertEqual(chmod(fx.tmp.path, 0o755), 0)
        let binary = fx.tmp.path("uploader")
        XCTAssertEqual(try ProcessRunner.run(["cp", fx.binary.path, binary]).exitCode, 0)
        let locked = try fx.tmp.mkdir("spool/retry/locked")
        _ = try fx.tmp.mkdir("spool/sent")
        _ = try fx.tmp.write("spool/retry/locked/a.bin", Data("a".utf8))
        var manifest = Manifest(id: "locked-a", profile: fx.profile, path: RelativePath("locked/a.bin"), size: 1,
                                mtime: Timestamp.format(Date()), sha256: nil, contentType: "application/octet-stream",
                                state: .failed, createdAt: Timestamp.format(Date()))
        manifest.lastError = "HTTP 403 Forbidden"
        _ = try fx.tmp.write("spool/retry/locked/a.bin.manifest.json", try Data(manifest.encodedLine()))
        XCTAssertEqual(try ProcessRunner.run(["chown", "-R", "nobody:nogroup", fx.spool]).exitCode, 0)
        XCTAssertEqual(chown(locked, 0, 0), 0)
        XCTAssertEqual(chmod(locked, 0o700), 0)
        return (fx, binary, locked)
    }

    private func runAsNobody(_ binary: String, _ arguments: [String], config: String) throws -> ProcessResult {
        try ProcessRunner.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", binary]
                              + arguments + ["--config", config], timeout: 60)
    }

    func testStatusAndRetrySayOnceOnStderrWhichDirectoryTheyCannotList() throws {
        let (fx, binary, locked) = try lockedSpool()
        let expected = "uploader: cannot list \(locked): Permission denied (errno 13)"

        let status = try runAsNobody(binary, ["status", "--json"], config: fx.config)
        XCTAssertEqual(status.exitCode, 5, "a spool it cannot read: \(status.description)")
        XCTAssertEqual(HostileFiles.lines(status.stderr, "cannot list"), [expected], status.stderr)

        let retry = try runAsNobody(binary, ["retry", "--all"], config: fx.config)
        XCTAssertEqual(HostileFiles.lines(retry.stderr, "cannot list"), [expected], retry.stderr)
        XCTAssertEqual(fx.files(in: locked), ["a.bin"], "nothing moved")
    }

    func testTheDaemonLogsOneWarningNamingTheDirectoryAndTheErrnoText() throws {
        let (fx, binary, locked) = try lockedSpool()
        let result = try runAsNobody(binary, ["run", "--once"], config: fx.config)
        XCTAssertEqual(result.exitCode, 0, "nothing to do: \(result)")
        let lines = HostileFiles.lines(result.stderr, "WARN cannot list directory")
        XCTAssertEqual(lines.count, 1, result.stderr)
        XCTAssertTrue(lines.first?.hasSuffix("dir=\(locked) error=\"Permission denied (errno 13)\"") ?? false, result.stderr)
    }
}
