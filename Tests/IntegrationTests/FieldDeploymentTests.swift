@preconcurrency import Glibc
import Foundation
import Testing

/// Installed as examples/systemd/README.md says — a service user owning the spool, a producer in
/// its group, a setgid outbox, `fs.protected_hardlinks = 1`, root at the command line — every file
/// is delivered and filed, and nothing the command line leaves is out of the service's reach.
@Suite(.serialized) struct FieldDeploymentTests {
    @Test func producersFilesAndEnqueuedFilesAllReachSentOwnedByTheService() throws {
        let server = try FaultServer()
        let field = try FieldDeployment()
        // The hook runs as the service, in the spool: it reads the file it is given and notes it.
        let hook = try field.tmp.write("hook.sh", "#!/bin/sh\nwc -c < \"$1\" >/dev/null && echo \"$UPLOADER_FILE\" >> hook-ran.log\n")
        chmod(hook, 0o755)
        try field.writeConfig(url: server.url("up/{path}"), extra: "on_sent = \(hook)")
        let daemon = try field.startDaemon()
        let contents: [String: Data] = [
            "a.txt": Data("0644, written in place by another user\n".utf8),
            "b.txt": Data("0640, umask 027\n".utf8),
            "c.bin": Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
            "d.bin": Data("enqueued by root\n".utf8),
        ]
        try field.produce("a.txt", contents["a.txt"]!, umask: "022")
        try field.produce("b.txt", contents["b.txt"]!, umask: "027")
        _ = try field.tmp.write("src/c.bin", contents["c.bin"]!)
        _ = try field.tmp.write("src/d.bin", contents["d.bin"]!)
        chmod(field.tmp.path("src"), 0o755)
        chmod(field.tmp.path("src/c.bin"), 0o644)
        let byProducer = try field.uploader(["enqueue", "--profile", "p", field.tmp.path("src/c.bin")], as: FieldDeployment.producer)
        #expect(byProducer.exitCode == 0, "\(byProducer)")
        let byRoot = try field.uploader(["enqueue", "--profile", "p", field.tmp.path("src/d.bin")])
        #expect(byRoot.exitCode == 0, "\(byRoot)")

        for name in contents.keys.sorted() {
            try waitUntil(timeout: 30, "\(name) to reach sent/ (daemon: \(daemon.stderrText()))") {
                field.exists("sent/\(name).manifest.json") && !field.exists("outbox/\(name)")
            }
        }
        let received = Dictionary(try server.recorded().filter { $0.method == "PUT" }.map { ($0.path, $0.bodySHA256) },
                                  uniquingKeysWith: { first, _ in first })
        for (name, data) in contents {
            #expect(received["/up/\(name)"] == sha256(of: data), "bytes of \(name) on the server")
            #expect(try sha256(ofFile: field.spool + "/sent/" + name) == sha256(of: data), "bytes of \(name) in sent/")
            #expect(try field.manifest("sent/\(name).manifest.json")["state"] as? String == "sent")
            #expect(try field.owner(field.spool + "/sent/\(name).manifest.json").user == FieldDeployment.service)
        }
        // The producer's own files were copied to make them the service's (their links are refused);
        // the producer's enqueued copy is group-writable, so the service links it as it is.
        for name in ["a.txt", "b.txt", "d.bin"] {
            #expect(try field.owner(field.spool + "/sent/" + name).user == FieldDeployment.service, "\(name)")
        }
        #expect(try field.owner(field.spool + "/sent/a.txt").mode == 0o644, "a copy keeps the producer's permissions")
        #expect(try field.owner(field.spool + "/sent/b.txt").mode == 0o640, "a copy keeps the producer's permissions")
        #expect(try field.owner(field.spool + "/sent/c.bin") == (FieldDeployment.producer, 0o660))
        var ran: [String] = []
        try waitUntil(timeout: 15, "the on_sent hook to run for every file (ran: \(ran))") {
            ran = ((try? String(contentsOfFile: field.spool + "/hook-ran.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            return ran.count == contents.count
        }
        #expect(Set(ran.map { ($0 as NSString).lastPathComponent }) == Set(contents.keys))
        let status = try field.uploader(["status", "--json"])
        let profile = try #require(((try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["profiles"]
            as? [String: Any])?["p"] as? [String: Any], "\(status)")
        #expect((profile["queued"] as? [String: Any])?["files"] as? Int == 0, "\(status.stdout)")
        #expect((profile["sent_24h"] as? [String: Any])?["files"] as? Int == 4, "\(status.stdout)")
        #expect(try stopDaemon(daemon).exitCode == 0)
        #expect(!daemon.stderrText().contains("Operation not permitted"), "\(daemon.stderrText())")
    }

    @Test func aFileFailedByTheServerAndPutBackByRootIsDeliveredByTheService() throws {
        let server = try FaultServer()
        try server.script([["status": 400, "body": "bad"]])
        let field = try FieldDeployment()
        try field.writeConfig(url: server.url("up/{path}"))
        let daemon = try field.startDaemon()
        let data = Data("refused once, then welcome\n".utf8)
        try field.produce("e.txt", data)
        try waitUntil(timeout: 30, "e.txt to fail into retry/ (daemon: \(daemon.stderrText()))") {
            field.exists("retry/e.txt.manifest.json") && !field.exists("outbox/e.txt.manifest.json")
        }
        #expect(try field.manifest("retry/e.txt.manifest.json")["state"] as? String == "failed")

        let retry = try field.uploader(["retry", "--all"])
        #expect(retry.exitCode == 0, "\(retry)")
        try waitUntil(timeout: 30, "e.txt to reach sent/ after root's retry (daemon: \(daemon.stderrText()))") {
            field.exists("sent/e.txt.manifest.json") && !field.exists("outbox/e.txt.manifest.json")
        }
        let manifest = try field.manifest("sent/e.txt.manifest.json")
        #expect((manifest["attempts"] as? [Any])?.count == 2, "\(manifest)")
        #expect(try field.owner(field.spool + "/sent/e.txt.manifest.json").user == FieldDeployment.service)
        // The lock both took (the daemon's move into retry/, root's move back) stays the service's.
        #expect(try field.owner(field.spool + "/.retry.lock").user == FieldDeployment.service)
        let puts = try server.recorded().filter { $0.method == "PUT" }
        #expect(puts.last?.bodySHA256 == sha256(of: data))
        #expect(try stopDaemon(daemon).exitCode == 0)
    }

    @Test func rootsRunOnceLeavesTheSpoolToItsOwnerAndAProducerIsToldWhoToRunAs() throws {
        let server = try FaultServer()
        let field = try FieldDeployment()
        try field.writeConfig(url: server.url("up/{path}"))
        let data = Data("cron at night\n".utf8)
        try field.produce("f.txt", data)

        let refused = try field.uploader(["run", "--once"], as: FieldDeployment.producer)
        #expect(refused.exitCode == 77, "\(refused)")
        #expect(refused.stderr.contains("user \(FieldDeployment.service)"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "one line: \(refused.stderr)")
        let retryRefused = try field.uploader(["retry", "--all"], as: FieldDeployment.producer)
        #expect(retryRefused.exitCode == 77, "\(retryRefused)")

        let once = try field.uploader(["run", "--once"])
        #expect(once.exitCode == 0, "\(once)")
        #expect(try sha256(ofFile: field.spool + "/sent/f.txt") == sha256(of: data))
        for relative in ["sent", "retry", "sent/f.txt", "sent/f.txt.manifest.json", ".lock", "outbox/.upl-tmp"] where field.exists(relative) {
            #expect(try field.owner(field.spool + "/" + relative).user == FieldDeployment.service, "\(relative) belongs to the service")
        }
        // The service, on its own afterwards, can run on what root's run left.
        try field.produce("g.txt", Data("later\n".utf8))
        let again = try field.uploader(["run", "--once"], as: FieldDeployment.service)
        #expect(again.exitCode == 0, "\(again)")
        #expect(field.exists("sent/g.txt.manifest.json"))
    }

    /// The token is revoked under a running service: a few files touched, none failed, the
    /// profile paused; the operator replaces the token file and everything arrives, no `retry`.
    /// Its stderr is the journal: every line carries its priority, the pause at warning.
    @Test func aRevokedTokenPausesTheServiceUntilTheTokenFileIsReplaced() throws {
        let server = try FaultServer()
        try server.refuseCredentials(status: 401, unlessAuthorization: "Bearer good")
        let field = try FieldDeployment()
        try field.writeSecret("token", "revoked")
        // A backoff of an hour: only the new token file can explain the resumption.
        try field.writeConfig(url: server.url("up/{path}"), backoff: "1h", extra: """
            auth = bearer
            token_file = \(field.tmp.path("token"))
            concurrency = 2
            """)
        var expected: [String: String] = [:]
        for i in 0..<8 {
            let data = Data((0..<(3000 + i * 101)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ i) })
            try field.produce("r\(i).bin", data)
            expected["r\(i).bin"] = sha256(of: data)
        }
        let journal = field.tmp.path("journal.log")
        let daemon = try field.startDaemonForTheJournal(journal)
        try waitUntil(timeout: 20, "the profile to pause for refused credentials") {
            try field.status()["paused_reason"] as? String == "rejected"
        }
        #expect(field.files(in: "retry").isEmpty, "no file failed for a 401")
        #expect(field.files(in: "outbox").count == 8)
        let touched = field.files(in: "outbox").filter { name in
            !((try? field.manifest("outbox/\(name).manifest.json"))?["attempts"] as? [Any] ?? []).isEmpty
        }
        #expect(touched.count >= 3 && touched.count <= 5, "a few files touched, not the backlog: \(touched)")

        try field.writeSecret("token", "good")
        try waitUntil(timeout: 30, "every file in sent/ after the token file changed") {
            field.files(in: "sent").count == 8 && field.files(in: "outbox").isEmpty
        }
        let accepted = try server.recorded().filter { $0.method == "PUT" && $0.header("Authorization") == "Bearer good" }
        for (name, hash) in expected {
            #expect(accepted.contains { $0.path == "/up/\(name)" && $0.bodySHA256 == hash }, "\(name) arrived whole")
            #expect(try sha256(ofFile: field.spool + "/sent/" + name) == hash)
        }
        #expect(try stopDaemon(daemon).exitCode == 0)
        let lines = try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { $0.firstMatch(of: #/^<[3467]>(ERROR|WARN|INFO|DEBUG) /#) != nil }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("<4>WARN destination refuses our credentials; profile paused") }, "\(lines)")
    }

    /// Apache's WebDAV, recursive outbox: a producer's group-writable subdirectory (umask 002)
    /// is delivered into new collections; one the service may not write is refused before any
    /// upload, with what to do.
    @Test func producersSubdirectoriesGoToApacheAndAnUnwritableOneIsRefusedWithTheFix() throws {
        let apache = try ApacheDAV()
        let field = try FieldDeployment()
        try field.writeConfig(url: apache.origin + "/dav/{date}/{path}", extra: "recursive = yes")
        let daemon = try field.startDaemon()
        let shared = Data("from cam1, 0644 in a 2775 directory\n".utf8)
        try FieldDeployment.sh("cd '\(field.outbox)' && " + FieldDeployment.asUser(FieldDeployment.producer, [
            "sh", "-c", "umask 002 && mkdir -p cam1/day && umask 022 && cat > cam1/day/a.jpg && umask 022 && mkdir cam2 && echo private > cam2/b.jpg",
        ]).map { "'\($0)'" }.joined(separator: " ") + " < '\(try field.tmp.write("a.jpg", shared))'")
        try waitUntil(timeout: 30, "cam1/day/a.jpg to reach sent/ (daemon: \(daemon.stderrText()))") {
            field.exists("sent/cam1/day/a.jpg.manifest.json") && !field.exists("outbox/cam1/day/a.jpg")
        }
        let manifest = try field.manifest("sent/cam1/day/a.jpg.manifest.json")
        let url = try #require((manifest["remote"] as? [String: Any])?["url"] as? String)
        let stored = try #require(URLComponents(string: url)?.percentEncodedPath.removingPercentEncoding)
        #expect(stored.hasSuffix("/cam1/day/a.jpg"), "\(url)")
        #expect(try sha256(ofFile: apache.file(stored)) == sha256(of: shared))
        #expect((manifest["attempts"] as? [Any])?.count == 1)

        try waitUntil(timeout: 15, "cam2/b.jpg to be refused (daemon: \(daemon.stderrText()))") {
            daemon.stderrText().contains("its directory cam2/ is not writable by this user")
        }
        #expect(field.exists("outbox/cam2/b.jpg") && !field.exists("outbox/cam2/b.jpg.manifest.json"), "left as it was, never sent")
        #expect(!apache.requests().contains { $0.path.hasSuffix("/b.jpg") })
        try waitUntil(timeout: 10, "status to count cam2/b.jpg as refused") {
            (try field.status()["refused"] as? [String: Any])?["files"] as? Int == 1
        }
        #expect(try stopDaemon(daemon).exitCode == 0)
    }

    /// A producer makes a directory and a file in it, and is still writing that file when the
    /// daemon, told of the directory, lists it: the file must wait until it is closed. Taken then,
    /// another user's file is copied to make it ours, and what the producer wrote after the copy
    /// would be lost. The daemon is stopped while the producer starts, so the listing meets the
    /// open file every time.
    @Test func aFileStillBeingWrittenInANewDirectoryIsTakenOnlyOnceClosed() throws {
        let server = try FaultServer()
        let field = try FieldDeployment()
        try field.writeConfig(url: server.url("up/{path}"), extra: "recursive = yes")
        let daemon = try field.startDaemon()
        try daemon.pause()
        let writer = try SlowProducer(field, file: "cam3/f.bin", makingDirectory: "cam3")
        try writer.waitUntilFirstHalfWritten()
        daemon.send(SIGCONT)
        try waitUntil(timeout: 15, "the daemon to list cam3/ with f.bin open in it (daemon: \(daemon.stderrText()))") {
            daemon.stderrText().contains("new directory; its files are claimed once closed dir=\(field.outbox)/cam3 files=1")
        }
        try writer.finish()
        try expectOneUploadOfEveryByte(writer, field, server, daemon)
    }

    /// Another user's file found at start-up while its producer still has it open: it is copied
    /// to make it ours, and the producer's next write goes into the original, which is kept beside
    /// the copy. Seen when the copy is filed, that write gives the original its name back, and the
    /// whole file is uploaded again.
    @Test func aWriteIntoTheOriginalOfACopiedFileDuringItsUploadIsUploadedToo() throws {
        let server = try FaultServer()
        let field = try FieldDeployment()
        try field.writeConfig(url: server.url("up/{path}"))
        let writer = try SlowProducer(field, file: "open.bin")
        try writer.waitUntilFirstHalfWritten()
        try server.script([["stall_after_bytes": 0, "stall_seconds": 3]])
        let daemon = try field.startDaemon()
        try waitUntil(timeout: 15, "open.bin copied, its original kept beside it (daemon: \(daemon.stderrText()))") {
            field.exists("outbox/.upl-adopt.open.bin") && field.exists("outbox/open.bin.manifest.json")
                && (try? field.owner(field.outbox + "/open.bin").user) == FieldDeployment.service
        }
        try writer.finish()
        // The copy's own move reaches sent/ first and comes back from there once the write is
        // seen, so only the whole file filed, with its original gone, is the end.
        try waitUntil(timeout: 30, "all of open.bin in sent/, its original gone (daemon: \(daemon.stderrText()))") {
            (try? field.manifest("sent/open.bin.manifest.json"))?["sha256"] as? String == writer.wholeSHA256
                && !field.exists("outbox/open.bin") && !field.exists("outbox/.upl-adopt.open.bin")
        }
        let puts = try server.recorded().filter { $0.method == "PUT" && $0.path == "/up/open.bin" }
        #expect(puts.last?.bodySHA256 == writer.wholeSHA256, "the last upload has every byte: \(puts.count) uploads")
        #expect(try sha256(ofFile: field.spool + "/sent/open.bin") == writer.wholeSHA256)
        #expect(daemon.stderrText().contains("file changed after its upload; uploading it again"), "\(daemon.stderrText())")
        #expect(try stopDaemon(daemon).exitCode == 0)
    }

    private func expectOneUploadOfEveryByte(_ writer: SlowProducer, _ field: FieldDeployment, _ server: FaultServer,
                                            _ daemon: RunningProcess) throws {
        try waitUntil(timeout: 30, "\(writer.file) in sent/ (daemon: \(daemon.stderrText()))") {
            field.exists("sent/\(writer.file).manifest.json") && !field.exists("outbox/\(writer.file)")
        }
        let puts = try server.recorded().filter { $0.method == "PUT" && $0.path == "/up/" + writer.file }
        #expect(puts.map(\.bodySHA256) == [writer.wholeSHA256], "one upload, of every byte the producer wrote")
        #expect(try sha256(ofFile: field.spool + "/sent/" + writer.file) == writer.wholeSHA256)
        #expect(try stopDaemon(daemon).exitCode == 0)
    }

    @Test func anotherUsersFileTheServiceCannotReadFailsWithItsReason() throws {
        let server = try FaultServer()
        let field = try FieldDeployment()
        try field.writeConfig(url: server.url("up/{path}"))
        try field.produce("secret.txt", Data("not for you\n".utf8), umask: "077")
        let once = try field.uploader(["run", "--once"], as: FieldDeployment.service)
        #expect(once.exitCode == 1, "a file went to retry/ as failed: \(once)")
        let manifest = try field.manifest("retry/secret.txt.manifest.json")
        #expect(manifest["state"] as? String == "failed")
        #expect((manifest["last_error"] as? String)?.contains("Permission denied") == true, "\(manifest)")
        #expect(field.exists("retry/secret.txt") && !field.exists("outbox/secret.txt"))
        #expect(once.stderr.contains("secret.txt"), "\(once.stderr)")
        #expect(try server.recorded().filter { $0.method == "PUT" }.isEmpty)
    }
}
