@preconcurrency import Glibc
import Foundation

/// The machine as the field has it (examples/systemd/README.md): a system user that owns the
/// spool and runs the daemon, a producer who is another user in its group, a setgid `2770`
/// outbox, `fs.protected_hardlinks = 1`, and root at the command line. Tests that give the whole
/// spool to root never meet the kernel's refusal to link another user's file; these do.
final class FieldDeployment: @unchecked Sendable {
    static let service = "upl-field-svc"
    static let producer = "upl-field-prod"

    let tmp: TempDir
    let binary: UploaderBinary
    var configPath: String { tmp.path("uploader.conf") }
    var spool: String { tmp.path("spool") }
    var outbox: String { spool + "/outbox" }

    /// Creates the two users (once per machine; kept for later runs), checks the kernel's
    /// protection, and lays out the spool as the docs say. Fails loudly when not root.
    init() throws {
        guard geteuid() == 0 else { throw HarnessError("the field tests create users and must run as root (CI does)") }
        try Self.ensureUsers()
        try Self.ensureProtectedHardlinks()
        tmp = try TempDir(prefix: "upl-field")
        binary = try UploaderBinary()
        guard chmod(tmp.path, 0o755) == 0 else { throw HarnessError("chmod \(tmp.path): \(String(cString: strerror(errno)))") }
        try Self.checkReachable(binary.path, by: Self.service)
        try Self.sh("install -d -m 0750 -o \(Self.service) -g \(Self.service) '\(spool)'"
            + " && install -d -m 2770 -o \(Self.service) -g \(Self.service) '\(outbox)'")
    }

    /// Writes uploader.conf (root's, world-readable: it holds no secret) with profile `p`.
    func writeConfig(url: String, backoff: String = "1s", extra: String = "") throws {
        _ = try tmp.write("uploader.conf", """
            [uploader]
            log_level = debug

            [outbox p]
            spool = spool
            url = \(url)
            connect_timeout = 2s
            backoff = \(backoff)
            \(extra)

            """)
        guard chmod(configPath, 0o644) == 0 else { throw HarnessError("chmod \(configPath)") }
    }

    /// `uploader run` as the service user, returned once it runs.
    func startDaemon() throws -> RunningProcess {
        let process = try ProcessRunner.start(Self.asUser(Self.service, [binary.path, "run", "--config", configPath]),
                                              outputDirectory: tmp.path)
        try waitUntil(timeout: 15, "the daemon to start (stderr: \(process.stderrText()))") {
            if !process.isRunning { throw HarnessError("uploader exited early: \(process.stderrText())") }
            return process.stderrText().contains(" running")
        }
        return process
    }

    /// `uploader run` as the service user with its stderr going to `journal` as systemd's does
    /// to the journal: `JOURNAL_STREAM` names that file's device and inode. Returned once it runs.
    func startDaemonForTheJournal(_ journal: String) throws -> RunningProcess {
        guard FileManager.default.createFile(atPath: journal, contents: nil), chmod(journal, 0o666) == 0 else {
            throw HarnessError("cannot make \(journal)")
        }
        var info = stat()
        guard stat(journal, &info) == 0 else { throw HarnessError("stat \(journal)") }
        let command = Self.asUser(Self.service, ["env", "JOURNAL_STREAM=\(info.st_dev):\(info.st_ino)", "sh", "-c",
                                                 "exec \"$0\" run --config \"$1\" 2>>\"$2\"", binary.path, configPath, journal])
        let process = try ProcessRunner.start(command, outputDirectory: tmp.path)
        try waitUntil(timeout: 15, "the daemon to start (its journal: \((try? String(contentsOfFile: journal, encoding: .utf8)) ?? ""))") {
            if !process.isRunning { throw HarnessError("uploader exited early: \(process.stderrText())") }
            return ((try? String(contentsOfFile: journal, encoding: .utf8)) ?? "").contains(" running")
        }
        return process
    }

    /// Writes a secret file as an operator would: root's, readable by the service's group only, replaced whole.
    func writeSecret(_ name: String, _ value: String) throws {
        let staging = try tmp.write(".secret-\(UUID().uuidString)", value + "\n")
        try Self.sh("chown root:\(Self.service) '\(staging)' && chmod 0640 '\(staging)' && mv '\(staging)' '\(tmp.path(name))'")
    }

    /// `status --json` of profile `p`, as root.
    func status() throws -> [String: Any] {
        let result = try uploader(["status", "--json"])
        guard let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
              let profile = (object["profiles"] as? [String: Any])?["p"] as? [String: Any] else {
            throw HarnessError("status --json: \(result)")
        }
        return profile
    }

    /// Names of the regular files in `area` (outbox, sent, retry), manifests and hidden names aside.
    func files(in area: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: spool + "/" + area)) ?? [])
            .filter { !$0.hasPrefix(".") && !$0.hasSuffix(".manifest.json") }.sorted()
    }

    /// `uploader ARGS --config …` as `user` (nil: root, as it is).
    func uploader(_ arguments: [String], as user: String? = nil, timeout: TimeInterval = 60) throws -> ProcessResult {
        let command = [binary.path] + arguments + ["--config", configPath]
        return try ProcessRunner.run(user.map { Self.asUser($0, command) } ?? command, timeout: timeout)
    }

    /// The producer writes `data` to `outbox/name` in place, with `umask`, as a program would.
    func produce(_ name: String, _ data: Data, umask mask: String = "022") throws {
        let staging = tmp.path(".data-\(UUID().uuidString)")
        try data.write(to: URL(fileURLWithPath: staging))
        chmod(staging, 0o644)
        defer { unlink(staging) }
        let result = try ProcessRunner.run(Self.asUser(Self.producer, ["sh", "-c", "umask \(mask) && cat \"$0\" > \"$1\"",
                                                                        staging, outbox + "/" + name]))
        guard result.exitCode == 0 else { throw HarnessError("the producer could not write \(name): \(result)") }
    }

    /// The owner's name and the permission bits of `path` (lstat).
    func owner(_ path: String) throws -> (user: String, mode: mode_t) {
        var st = stat()
        guard lstat(path, &st) == 0 else { throw HarnessError("lstat \(path): \(String(cString: strerror(errno)))") }
        let name = getpwuid(st.st_uid).map { String(cString: $0.pointee.pw_name) } ?? "uid \(st.st_uid)"
        return (name, st.st_mode & 0o7777)
    }

    func manifest(_ relative: String) throws -> [String: Any] {
        guard let data = FileManager.default.contents(atPath: spool + "/" + relative),
              let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw HarnessError("no manifest at \(relative)")
        }
        return object
    }

    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: spool + "/" + relative) }

    /// `setpriv` runs `command` as `user` with that user's groups, as `su` would, without PAM.
    /// Gives a root-made test's spool to the field's service user, as the package would, so that
    /// "the service user" `check-config` checks for is that user whatever else this machine has
    /// (a package test may add the user `uploader` while other tests run). `directory`, the
    /// test's own, is made searchable so that the user can reach the spool.
    static func giveSpoolToServiceUser(_ spool: String, in directory: String) throws {
        guard geteuid() == 0 else { throw HarnessError("giving a spool to \(service) needs root (CI runs as root)") }
        try ensureUsers()
        guard chmod(directory, 0o755) == 0 else { throw HarnessError("chmod \(directory): \(String(cString: strerror(errno)))") }
        try sh("mkdir -p '\(spool)/outbox' '\(spool)/sent' '\(spool)/retry' && chown -R \(service):\(service) '\(spool)'")
    }

    static func asUser(_ user: String, _ command: [String]) -> [String] {
        ["setpriv", "--reuid=\(user)", "--regid=\(user)", "--init-groups", "--reset-env"] + command
    }

    private static func ensureUsers() throws {
        if getpwnam(service) == nil {
            try sh("useradd --system --user-group --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin \(service)")
        }
        if getpwnam(producer) == nil {
            try sh("useradd --user-group --home-dir /nonexistent --no-create-home --shell /bin/sh \(producer)")
        }
        try sh("usermod -a -G \(service) \(producer)")
    }

    private static func ensureProtectedHardlinks() throws {
        let path = "/proc/sys/fs/protected_hardlinks"
        if (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) != "1" {
            try sh("sysctl -q -w fs.protected_hardlinks=1")
        }
    }

    /// The service user must reach the binary: every directory on its path must let others pass.
    private static func checkReachable(_ binary: String, by user: String) throws {
        let result = try ProcessRunner.run(asUser(user, ["test", "-x", binary]))
        guard result.exitCode == 0 else {
            throw HarnessError("user \(user) cannot run \(binary): a directory on its path is not searchable by others")
        }
    }

    @discardableResult
    static func sh(_ script: String) throws -> ProcessResult {
        let result = try ProcessRunner.run(["sh", "-c", script])
        guard result.exitCode == 0 else { throw HarnessError("`\(script)` failed: \(result)") }
        return result
    }
}
