@preconcurrency import Glibc
import Foundation
import Testing

/// Installed with a drop group, without the package: `producers = GROUP` makes the daemon give
/// the outbox to that group at start (and say so), a producer in that group only drops,
/// enqueues and reads `status` through the profile index without reading the config, and
/// `check-config` warns exactly when a secret can be read by someone other than root and the
/// service user.
@Suite(.serialized) struct ProducersGroupTests {
    static let drop = "upl-field-drop"
    /// A group holding the service user alone: what `uploader` is for the package.
    static let keys = "upl-field-keys"
    /// A producer in the drop group only (FieldDeployment's producer is in the service's group).
    static let dropper = "upl-field-dropper"

    /// The groups and the drop-only producer, made once per machine and kept, as FieldDeployment's users are.
    static func ensureGroups() throws {
        for group in [drop, keys] where getgrnam(group) == nil { try FieldDeployment.sh("groupadd --system \(group)") }
        if getpwnam(dropper) == nil {
            try FieldDeployment.sh("useradd --user-group --home-dir /nonexistent --no-create-home --shell /bin/sh \(dropper)")
        }
        try FieldDeployment.sh("usermod -G \(drop) \(dropper) && usermod -a -G \(drop),\(keys) \(FieldDeployment.service)")
    }

    @Test func theDaemonGivesTheOutboxToTheProducersGroupAndAProducerWorksFromTheIndex() throws {
        let server = try FaultServer()
        let field = try FieldDeployment()
        try Self.ensureGroups()
        // As the daemon made outboxes before: 0750, only the service writes it.
        try FieldDeployment.sh("chmod 0750 '\(field.outbox)'")
        try FieldDeployment.sh("install -d -m 0755 -o \(FieldDeployment.service) -g \(FieldDeployment.service) '\(field.tmp.path("lib"))'")
        let index = field.tmp.path("lib/profiles.json")
        _ = try field.tmp.write("uploader.conf", """
            [uploader]
            log_level = debug
            index = \(index)

            [outbox p]
            spool = spool
            url = \(server.url("up/{path}"))
            backoff = 1s
            producers = \(Self.drop)

            """)
        // The config as the package has it: the service's group only.
        try FieldDeployment.sh("chown root:\(Self.keys) '\(field.configPath)' && chmod 0640 '\(field.configPath)'")
        let daemon = try field.startDaemon()
        defer { _ = try? stopDaemon(daemon) }

        #expect(try field.owner(field.outbox).mode == 0o2770)
        #expect(try Self.group(field.outbox) == Self.drop)
        #expect(try Self.group(field.spool) == Self.drop, "the drop group reaches the outbox")
        #expect(try field.owner(field.spool).mode == 0o750)
        for area in ["sent", "retry"] {
            #expect(try Self.group(field.spool + "/" + area) == FieldDeployment.service, "\(area)/ stays the service's")
        }
        let line = daemon.stderrText().split(separator: "\n").first { $0.contains("outbox made ready for producers") }
        #expect(line?.contains("mode=\"2770 \(FieldDeployment.service):\(Self.drop)\"") == true
                || line?.contains("mode=2770 \(FieldDeployment.service):\(Self.drop)") == true, "\(daemon.stderrText())")
        #expect(line?.contains("was=") == true, "\(daemon.stderrText())")

        // The producer: no config, no secret; the index says where the outbox is.
        let asDropper = { (arguments: [String]) throws -> ProcessResult in
            try ProcessRunner.run(FieldDeployment.asUser(Self.dropper, ["env", "UPLOADER_INDEX=\(index)", field.binary.path]
                + arguments + ["--config", field.configPath]))
        }
        let denied = try ProcessRunner.run(FieldDeployment.asUser(Self.dropper, ["cat", field.configPath]))
        #expect(denied.exitCode != 0 && denied.stderr.contains("Permission denied"), "\(denied)")
        let dropped = Data("dropped by a producer of the drop group\n".utf8)
        let source = try field.tmp.write("dropped.txt", dropped)
        chmod(source, 0o644)
        let cp = try ProcessRunner.run(FieldDeployment.asUser(Self.dropper, ["cp", source, field.outbox + "/dropped.txt"]))
        #expect(cp.exitCode == 0, "\(cp)")
        let enqueued = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let enqueuedSource = try field.tmp.write("enqueued.bin", enqueued)
        chmod(enqueuedSource, 0o644)
        let enqueue = try asDropper(["enqueue", "--profile", "p", enqueuedSource])
        #expect(enqueue.exitCode == 0, "\(enqueue)")
        #expect(enqueue.stderr == "uploader: cannot read config \(field.configPath) (Permission denied); using the profile index \(index)\n")
        for name in ["dropped.txt", "enqueued.bin"] {
            try waitUntil(timeout: 30, "\(name) to reach sent/ (daemon: \(daemon.stderrText()))") {
                field.exists("sent/\(name).manifest.json") && !field.exists("outbox/\(name)")
            }
        }
        let received = Dictionary(try server.recorded().filter { $0.method == "PUT" }.map { ($0.path, $0.bodySHA256) },
                                  uniquingKeysWith: { first, _ in first })
        #expect(received["/up/dropped.txt"] == sha256(of: dropped))
        #expect(received["/up/enqueued.bin"] == sha256(of: enqueued))

        let status = try asDropper(["status", "--json"])
        #expect(status.exitCode == 0, "\(status)")
        #expect(status.stderr == "uploader: cannot read config \(field.configPath) (Permission denied); using the profile index \(index)\n")
        let profile = try #require(((try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["profiles"]
            as? [String: Any])?["p"] as? [String: Any], "\(status)")
        #expect(profile["daemon_pid"] as? Int == Int(daemon.pid), "the producer sees the running daemon: \(status.stdout)")
        #expect((profile["queued"] as? [String: Any])?["files"] as? Int == 0, "\(status.stdout)")
        let listRetry = try ProcessRunner.run(FieldDeployment.asUser(Self.dropper, ["ls", field.spool + "/retry"]))
        #expect(listRetry.exitCode != 0, "retry/ is not the producers': \(listRetry)")

        // Without the index, one line names both paths.
        let neither = try ProcessRunner.run(FieldDeployment.asUser(Self.dropper, ["env", "UPLOADER_INDEX=\(field.tmp.path("none.json"))",
                                                                                 field.binary.path, "status", "--config", field.configPath]))
        #expect(neither.exitCode != 0)
        #expect(neither.stderr.hasPrefix("uploader: cannot read config \(field.configPath) (Permission denied) nor the profile index "
            + "\(field.tmp.path("none.json")) (No such file or directory); "), "\(neither)")
    }

    @Test func checkConfigWarnsExactlyWhenSomeoneElseCanReadASecret() throws {
        let field = try FieldDeployment()
        try Self.ensureGroups()
        let credentials = field.tmp.path("credentials")
        try FieldDeployment.sh("install -d -m 0700 -o root -g root '\(credentials)'")
        let cases: [(name: String, owner: String, mode: String, warned: String?)] = [
            ("everyone.token", "root:root", "0644", "is readable by every user (mode 0644, root:root)"),
            ("drop.token", "root:\(Self.drop)", "0640", "is readable by user \(Self.dropper) (mode 0640, root:\(Self.drop))"),
            ("keys.token", "root:\(Self.keys)", "0640", nil),
        ]
        for item in cases {
            try field.writeSecret(item.name, "t0ken")
            try FieldDeployment.sh("chown \(item.owner) '\(field.tmp.path(item.name))' && chmod \(item.mode) '\(field.tmp.path(item.name))'")
        }
        try FieldDeployment.sh("echo c0ed > '\(credentials)/cred.token' && chmod 0600 '\(credentials)/cred.token'")
        for item in cases + [("cred.token", "root:root", "0600", nil)] {
            try field.writeConfig(url: "http://127.0.0.1:9/{path}", extra: "auth = bearer\ntoken_file = \(item.name)")
            let result = try ProcessRunner.run([field.binary.path, "check-config", "--config", field.configPath],
                                               environment: ["CREDENTIALS_DIRECTORY": credentials])
            #expect(result.exitCode == 0, "\(result)")
            let warnings = result.stderr.split(separator: "\n").filter { $0.contains("warning:") }
            guard let expected = item.warned else {
                #expect(warnings == [], "\(item.name) (\(item.owner) \(item.mode)) is for root and the service only")
                continue
            }
            let path = field.tmp.path(item.name)
            let service = FieldDeployment.service
            let fix: String = "fix: chown root:\(service) \(path) && chmod 640 \(path) (group \(service) holding only \(service)), "
                + "or make it 0600 root:root and give it by LoadCredential= (a relative path is looked up in $CREDENTIALS_DIRECTORY)"
            let line: String = "\(field.configPath):10: warning: secret file (token_file) \(path) \(expected), not only by root and "
                + "the service user \(service); " + fix
            #expect(warnings.map(String.init) == [line], "\(item.name)")
        }
    }

    static func group(_ path: String) throws -> String {
        var st = stat()
        guard lstat(path, &st) == 0 else { throw HarnessError("lstat \(path)") }
        return getgrgid(st.st_gid).map { String(cString: $0.pointee.gr_name) } ?? "gid \(st.st_gid)"
    }
}
