@preconcurrency import Glibc
import Foundation
import XCTest

/// The installed package as an operator sets it up with the shipped files alone: a profile with
/// `producers = uploader-drop` in /etc/uploader/uploader.conf, a token 0640 root:uploader beside
/// it and the same name given as a systemd credential. The daemon runs as user `uploader`; a
/// producer in group `uploader-drop` only drops and enqueues files that reach the server, reads
/// `status`, and can read neither the config nor any secret. No `install -d` by hand.
extension DebianPackageTests {
    static let producer = "upl-deb-producer"
    static let config = "/etc/uploader/uploader.conf"

    func checkProducersAndSecrets() throws {
        let original = try String(contentsOfFile: Self.config, encoding: .utf8)
        try FieldDeployment.sh("useradd --user-group --no-create-home --home-dir /nonexistent --shell /bin/sh "
            + "--groups uploader-drop \(Self.producer)")
        let work = try TempDir(prefix: "upl-deb-producers")
        defer {
            _ = try? ProcessRunner.run(["userdel", Self.producer])
            try? original.write(toFile: Self.config, atomically: false, encoding: .utf8)
        }
        let sink = try NginxSink()
        let audit = try FaultServer()
        // The token beside the config, as the package's comments say; the credential of the same
        // name, as systemd's LoadCredential= leaves it: a 0700 directory of the service's user.
        try FieldDeployment.sh("printf 'beside-the-config\\n' > /etc/uploader/photos.token"
            + " && chown root:uploader /etc/uploader/photos.token && chmod 0640 /etc/uploader/photos.token")
        let credentials = work.path("credentials")
        try FieldDeployment.sh("install -d -m 0700 -o uploader -g uploader '\(credentials)'"
            + " && printf 'from-credentials\\n' > '\(credentials)/photos.token'"
            + " && chown uploader:uploader '\(credentials)/photos.token' && chmod 0400 '\(credentials)/photos.token'")
        chmod(work.path, 0o755)
        try (original + """

            [outbox photos]
            spool = /var/spool/uploader/photos
            url = \(sink.url("photos/{path}"))
            producers = uploader-drop
            auth = bearer
            token_file = photos.token
            backoff = 1s

            [outbox audit]
            spool = /var/spool/uploader/audit
            url = \(audit.url("audit/{path}"))
            auth = bearer
            token_file = photos.token

            """).write(toFile: Self.config, atomically: false, encoding: .utf8)

        let daemon = try ProcessRunner.start(
            FieldDeployment.asUser("uploader", ["env", "CREDENTIALS_DIRECTORY=\(credentials)", "/usr/bin/uploader", "run",
                                                "--config", Self.config]),
            currentDirectory: "/", outputDirectory: work.path)
        defer { _ = try? stopDaemon(daemon) }
        try waitUntil(timeout: 15, "the installed daemon to start (stderr: \(daemon.stderrText()))") {
            if !daemon.isRunning { throw HarnessError("uploader exited early: \(daemon.stderrText())") }
            return daemon.stderrText().contains(" running")
        }
        XCTAssertTrue(daemon.stderrText().contains("outbox made ready for producers profile=photos "
            + "outbox=/var/spool/uploader/photos/outbox mode=\"2770 uploader:uploader-drop\" was=\"0750 uploader:uploader\""),
                      daemon.stderrText())
        let checked = try ProcessRunner.run(["/usr/bin/uploader", "check-config"], currentDirectory: "/")
        XCTAssertEqual(checked.exitCode, 0, "\(checked)")
        XCTAssertFalse(checked.stderr.contains("warning:"), "0640 root:uploader, group uploader holding the service alone: \(checked.stderr)")

        // The producer, from its own directory: the config and every secret are refused to it.
        let asProducer = { (command: [String]) throws -> ProcessResult in
            try ProcessRunner.run(FieldDeployment.asUser(Self.producer, command), currentDirectory: "/")
        }
        for secret in [Self.config, "/etc/uploader/photos.token", credentials + "/photos.token"] {
            let read = try asProducer(["cat", secret])
            XCTAssertNotEqual(read.exitCode, 0, "the producer read \(secret)")
            XCTAssertTrue(read.stderr.contains("Permission denied"), "\(secret): \(read)")
        }
        let dropped = Data((0..<400_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let enqueued = Data("enqueued by a producer of the drop group\n".utf8)
        try dropped.write(to: URL(fileURLWithPath: work.path("dropped.bin")))
        try enqueued.write(to: URL(fileURLWithPath: work.path("enqueued.txt")))
        chmod(work.path("dropped.bin"), 0o644)
        chmod(work.path("enqueued.txt"), 0o644)
        let cp = try asProducer(["cp", work.path("dropped.bin"), "/var/spool/uploader/photos/outbox/dropped.bin"])
        XCTAssertEqual(cp.exitCode, 0, "\(cp)")
        let enqueue = try asProducer(["/usr/bin/uploader", "enqueue", "--profile", "photos", work.path("enqueued.txt")])
        XCTAssertEqual(enqueue.exitCode, 0, "\(enqueue)")
        XCTAssertEqual(enqueue.stderr, "uploader: cannot read config \(Self.config) (Permission denied); "
            + "using the profile index /var/lib/uploader/profiles.json\n")
        for (name, data) in [("dropped.bin", dropped), ("enqueued.txt", enqueued)] {
            try waitUntil(timeout: 30, "\(name) to reach sent/ (daemon: \(daemon.stderrText()))") {
                FileManager.default.fileExists(atPath: "/var/spool/uploader/photos/sent/\(name).manifest.json")
            }
            XCTAssertEqual(try sha256(ofFile: sink.file("photos/\(name)")), sha256(of: data), "bytes of \(name) on the server")
        }
        // Its own profile: the audit spool is none of its business (and not within its reach).
        let status = try asProducer(["/usr/bin/uploader", "status", "--profile", "photos"])
        XCTAssertEqual(status.exitCode, 0, "a daemon running, nothing failed: \(status)")
        XCTAssertTrue(status.stdout.contains("[photos] /var/spool/uploader/photos"), "\(status)")
        XCTAssertEqual(status.stderr, "uploader: cannot read config \(Self.config) (Permission denied); "
            + "using the profile index /var/lib/uploader/profiles.json\n")
        for area in ["sent", "retry"] {
            let list = try asProducer(["ls", "/var/spool/uploader/photos/\(area)"])
            XCTAssertNotEqual(list.exitCode, 0, "the producer listed \(area)/")
        }

        // The credential, not the file beside the config, went out.
        let auditFile = Data("audit\n".utf8)
        try auditFile.write(to: URL(fileURLWithPath: "/var/spool/uploader/audit/outbox/a.txt"))
        try waitUntil(timeout: 30, "a.txt to reach the audit server (daemon: \(daemon.stderrText()))") {
            try audit.recorded().contains { $0.method == "PUT" && $0.path == "/audit/a.txt" }
        }
        let put = try XCTUnwrap(try audit.recorded().first { $0.method == "PUT" && $0.path == "/audit/a.txt" })
        XCTAssertEqual(put.header("Authorization"), "Bearer from-credentials")
        XCTAssertEqual(try stopDaemon(daemon).exitCode, 0, daemon.stderrText())
    }
}
