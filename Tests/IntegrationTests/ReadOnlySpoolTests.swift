@preconcurrency import Glibc
import Foundation
import Testing

/// Issue #25: a write refused as a systemd sandbox refuses it — a read-only file system, which
/// is what `ProtectSystem=strict` makes of every path outside `ReadWritePaths=` — on a spool,
/// its lock or the metrics file gives an error line naming the `ReadWritePaths=` to add, and a
/// daemon that cannot write its spool exits 73, which the unit does not restart.
///
/// Each run is in a mount namespace of its own (`unshare --mount`) where a read-only tmpfs
/// covers one directory of the test's; nothing outside that namespace changes.
@Suite struct ReadOnlySpoolTests {
    private func config(_ tmp: TempDir, spool: String, global: String = "") throws -> String {
        try tmp.write("uploader.conf", """
            [uploader]
            \(global)

            [outbox p]
            spool = \(spool)
            url = http://127.0.0.1:\(try FreePort.next())/up/{path}

            """)
    }

    @Test func aSpoolThatCannotBeCreatedNamesTheReadWritePathsAndExits73() throws {
        let tmp = try TempDir()
        let readOnly = try tmp.mkdir("ro")
        let spool = readOnly + "/photos"
        let config = try config(tmp, spool: spool)
        let result = try runUnder(readOnly: readOnly, ["run", "--once", "--config", config])
        #expect(result.exitCode == 73, "\(result)")
        #expect(result.stderr.contains(
            "uploader: profile p: cannot prepare spool: mkdir \(spool): Read-only file system (errno 30); "
                + "under systemd create \(spool) and add \"ReadWritePaths=\(spool)\" to the unit"), "\(result.stderr)")
    }

    @Test func aSpoolThatExistsButIsReadOnlyNamesItForTheLock() throws {
        let tmp = try TempDir()
        let spool = try tmp.mkdir("spool")
        let config = try config(tmp, spool: spool)
        // Every directory of the spool exists: the first write is the lock file.
        let result = try runUnder(readOnly: spool, holding: ["outbox/.upl-tmp", "sent", "retry"], ["run", "--once", "--config", config])
        #expect(result.exitCode == 73, "\(result)")
        #expect(result.stderr.contains(
            "uploader: profile p: cannot take lock: open \(spool)/.lock: Read-only file system (errno 30); "
                + "under systemd add \"ReadWritePaths=\(spool)\" to the unit"), "\(result.stderr)")
    }

    @Test func aMetricsFileInAReadOnlyDirectoryNamesItsDirectory() throws {
        let tmp = try TempDir()
        let readOnly = try tmp.mkdir("metrics")
        let config = try config(tmp, spool: tmp.path("spool"), global: "metrics_file = \(readOnly)/uploader.prom")
        let result = try runUnder(readOnly: readOnly, ["run", "--once", "--config", config])
        #expect(result.exitCode == 0, "\(result)")
        let line = try #require(result.stderr.split(separator: "\n").first { $0.contains("cannot write metrics_file") }, "\(result.stderr)")
        #expect(line.contains("Read-only file system (errno 30); under systemd add \\\"ReadWritePaths=\(readOnly)\\\" to the unit"),
                "\(line)")
    }

    /// Runs `uploader ARGS` where `readOnly` is a read-only tmpfs, holding the directories
    /// `holding` (made before it is remounted read-only).
    private func runUnder(readOnly: String, holding directories: [String] = [], _ arguments: [String]) throws -> ProcessResult {
        guard let unshare = ProcessRunner.which("unshare") else {
            throw HarnessError("unshare (util-linux) is not installed: run scripts/install-deps.sh")
        }
        let make = directories.map { " && mkdir -p \"$0/\($0)\"" }.joined()
        let script = #"mount -t tmpfs -o size=1m,mode=0755 ro-test "$0""# + make + #" && mount -o remount,ro "$0" && exec "$@""#
        return try ProcessRunner.run(
            [unshare, "--mount", "--propagation", "private", "sh", "-c", script, readOnly, try UploaderBinary().path] + arguments,
            timeout: 60)
    }
}
