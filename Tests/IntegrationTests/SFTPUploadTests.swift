@preconcurrency import Glibc
import Foundation
import Testing
@testable import UploaderSupport

/// The built uploader against OpenSSH's sshd (started by each test on loopback, as a chrooted,
/// key-only drop zone): files arrive whole under their final names, never a partial one; a host
/// key that does not match pauses the profile as `host_key`; a revoked key as `rejected`; a cut
/// connection resumes from the server's size; a full disk on the server is tried again later.
@Suite(.serialized) struct SFTPUploadTests {
    /// Config lines of a profile that reaches `server` with its key and known_hosts.
    func sftpExtra(_ server: SSHServer, key: String? = nil, hostKey: String? = nil, more: String = "") -> String {
        var lines = ["private_key_file = \(key ?? server.userKey)", "backoff = 1s"]
        lines.append(hostKey.map { "host_key_sha256 = \($0)" } ?? "known_hosts = \(server.knownHosts)")
        if !more.isEmpty { lines.append(more) }
        return lines.joined(separator: "\n")
    }

    func status(_ fx: SpoolFixture) throws -> [String: Any] {
        let result = try fx.run(["status", "--json"])
        // 2: files failed for good; 3: paused until an operator acts (host key, credentials); 0 otherwise.
        guard [0, 2, 3].contains(result.exitCode), let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
              let profiles = object["profiles"] as? [String: Any], let profile = profiles[fx.profile] as? [String: Any] else {
            throw HarnessError("status --json: \(result)")
        }
        return profile
    }

    func random(_ count: Int, seed: UInt8) -> Data { Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &+ $0 >> 11) }) }

    @Test func filesArriveWholeInMadeDirectoriesNoTemporaryIsLeftAndANewVersionReplacesTheOld() throws {
        let server = try SSHServer()
        let fx = try SpoolFixture(url: server.url("{date}/{path}"), extra: sftpExtra(server, more: "recursive = yes"))
        let first = random(300_000, seed: 1)
        let nested = random(70_000, seed: 2)
        try fx.drop("a.bin", first)
        try FileManager.default.createDirectory(atPath: fx.outbox + "/cam1/day", withIntermediateDirectories: true)
        try fx.drop("cam1/day/b.jpg", nested)
        let run = try fx.runOnce()
        #expect(run.exitCode == 0, "\(run)")
        let day = Timestamp.day(Date())
        #expect(server.files() == ["\(day)/a.bin", "\(day)/cam1/day/b.jpg"], "no temporary left: \(server.files())")
        #expect(try sha256(ofFile: server.file("\(day)/a.bin")) == sha256(of: first))
        #expect(try sha256(ofFile: server.file("\(day)/cam1/day/b.jpg")) == sha256(of: nested))
        let remote = try #require(try fx.manifestJSON("cam1/day/b.jpg", in: fx.sent)["remote"] as? [String: Any])
        #expect(remote["protocol"] as? String == "sftp")
        #expect(remote["remote_path"] as? String == "/drop/\(day)/cam1/day/b.jpg")
        #expect(remote["bytes_confirmed"] as? Int == nested.count)
        #expect(FileManager.default.fileExists(atPath: fx.sent + "/cam1/day/b.jpg"))

        // exists = overwrite (the default) on OpenSSH, whose rename refuses an existing target.
        let second = random(123_456, seed: 3)
        try fx.drop("a.bin", second)
        let again = try fx.runOnce()
        #expect(again.exitCode == 0, "\(again)")
        #expect(try sha256(ofFile: server.file("\(day)/a.bin")) == sha256(of: second))
        #expect(server.files() == ["\(day)/a.bin", "\(day)/cam1/day/b.jpg"])
    }

    @Test func aHostKeyThatDoesNotMatchPausesTheProfileUntilKnownHostsIsFixed() throws {
        let server = try SSHServer()
        let other = try SSHServer.newKey(in: server.tmp, name: "other_host")
        let otherFingerprint = try SSHServer.fingerprint(ofPublicKey: other + ".pub")
        let publicKey = try String(contentsOfFile: other + ".pub", encoding: .utf8).split(separator: " ").prefix(2).joined(separator: " ")
        let knownHosts = try server.tmp.write("wrong_known_hosts", "[127.0.0.1]:\(server.port) \(publicKey)\n")
        let fx = try SpoolFixture(url: server.url("{path}"), extra: """
            private_key_file = \(server.userKey)
            known_hosts = \(knownHosts)
            backoff = 1h
            """)
        let data = random(5000, seed: 4)
        try fx.drop("f.bin", data)
        let daemon = try fx.startDaemon()
        defer { daemon.stop() }
        try waitUntil(timeout: 20, "the profile to pause for the host key") { try status(fx)["paused_reason"] as? String == "host_key" }
        let line = try #require(daemon.stderrText().split(separator: "\n").first { $0.contains("host key does not match") })
        #expect(line.contains("ERROR"), "\(line)")
        #expect(line.contains("the server offers \(server.hostKeyFingerprint) (ssh-ed25519)"), "\(line)")
        #expect(line.contains("known_hosts \(knownHosts) has \(otherFingerprint)"), "\(line)")
        #expect(fx.files(in: fx.outbox) == ["f.bin"] && fx.files(in: fx.retry).isEmpty, "the file stays queued")
        #expect(server.files().isEmpty)

        // A backoff of an hour: only the corrected known_hosts explains the delivery.
        try FileManager.default.removeItem(atPath: knownHosts)
        try FileManager.default.copyItem(atPath: server.knownHosts, toPath: knownHosts)
        try waitUntil(timeout: 30, "f.bin in sent/ after known_hosts was fixed") { fx.files(in: fx.sent) == ["f.bin"] }
        #expect(try sha256(ofFile: server.file("f.bin")) == sha256(of: data))
    }

    @Test func aPinnedFingerprintWithOrWithoutItsPrefixIsAccepted() throws {
        let server = try SSHServer()
        let bare = String(server.hostKeyFingerprint.dropFirst("SHA256:".count))
        let fx = try SpoolFixture(url: server.url("{path}"), extra: sftpExtra(server, hostKey: bare))
        try fx.drop("one.txt", Data("one\n".utf8))
        #expect(try fx.runOnce().exitCode == 0)
        try fx.rewrite(url: server.url("{path}"), extra: sftpExtra(server, hostKey: server.hostKeyFingerprint))
        try fx.drop("two.txt", Data("two\n".utf8))
        #expect(try fx.runOnce().exitCode == 0)
        #expect(server.files() == ["one.txt", "two.txt"])
    }

    @Test func aRevokedKeyPausesAsRejectedAndTheReplacedKeyFileDeliversEverything() throws {
        let server = try SSHServer()
        let keys = try TempDir(prefix: "upl-sftp-keys")
        let revoked = try SSHServer.newKey(in: keys, name: "revoked")
        let fx = try SpoolFixture(url: server.url("{path}"), extra: sftpExtra(server, key: revoked, more: "concurrency = 1").replacingOccurrences(of: "backoff = 1s", with: "backoff = 1h"))
        var expected: [String: String] = [:]
        for i in 0..<4 {
            let data = random(2000 + i * 77, seed: UInt8(10 + i))
            try fx.drop("r\(i).bin", data)
            expected["r\(i).bin"] = sha256(of: data)
        }
        let daemon = try fx.startDaemon()
        defer { daemon.stop() }
        try waitUntil(timeout: 20, "the profile to pause for refused credentials") { try status(fx)["paused_reason"] as? String == "rejected" }
        #expect(fx.files(in: fx.retry).isEmpty, "no file failed for a refused login")
        #expect(daemon.stderrText().contains("login refused"), "\(daemon.stderrText())")

        let key = try String(contentsOfFile: server.userKey, encoding: .utf8)
        try key.write(toFile: revoked, atomically: true, encoding: .utf8)
        try waitUntil(timeout: 30, "every file in sent/ after the key file was replaced") { fx.files(in: fx.sent).count == 4 }
        for (name, hash) in expected { #expect(try sha256(ofFile: server.file(name)) == hash, "\(name)") }
    }

    @Test func aConnectionCutMidFileResumesFromTheServersSizeAndPublishesTheWholeFile() throws {
        let server = try SSHServer()
        let fx = try SpoolFixture(url: server.url("{path}"), extra: sftpExtra(server, more: "max_rate = 1MiB"))
        let data = random(4 << 20, seed: 5)
        try fx.drop("clip.mp4", data)
        let daemon = try fx.startDaemon()
        defer { daemon.stop() }
        let temporary = server.file(".clip.mp4.part")
        try waitUntil(timeout: 20, "a megabyte under the temporary name") {
            ((try? FileManager.default.attributesOfItem(atPath: temporary))?[.size] as? Int ?? 0) >= 1 << 20
        }
        #expect(!FileManager.default.fileExists(atPath: server.file("clip.mp4")), "no partial file under the final name")
        server.cutSessions()
        try waitUntil(timeout: 30, "clip.mp4 in sent/ (daemon: \(daemon.stderrText()))") { fx.files(in: fx.sent) == ["clip.mp4"] }
        #expect(try sha256(ofFile: server.file("clip.mp4")) == sha256(of: data))
        #expect(server.files() == ["clip.mp4"], "no temporary left")
        let manifest = try fx.manifest("clip.mp4", in: fx.sent)
        #expect(manifest.attempts.count == 2, "\(manifest.attempts)")
        let resumed = try #require(manifest.attempts.last)
        #expect(resumed.bytesSent > 0 && resumed.bytesSent < Int64(data.count) - (1 << 20),
                "the second attempt sent only the rest: \(resumed.bytesSent)")
        #expect(daemon.stderrText().contains("resuming upload from the temporary file's size on the server"))
    }

    @Test func aFullDiskOnTheServerLeavesTheFileInRetryWithTheReason() throws {
        let server = try SSHServer()
        try server.mountSmallDisk("full", size: "1m")
        let fx = try SpoolFixture(url: server.url("full/{path}"), extra: sftpExtra(server))
        try fx.drop("big.bin", random(3 << 20, seed: 6))
        let run = try fx.runOnce()
        #expect(run.exitCode == 1, "a file left to retry: \(run)")
        #expect(fx.files(in: fx.retry) == ["big.bin"])
        let manifest = try fx.manifest("big.bin", in: fx.retry)
        #expect(manifest.state == .retry && manifest.nextAttemptAt != nil)
        #expect(manifest.lastError?.contains("full disk") == true, "\(manifest.lastError ?? "")")
        #expect(!FileManager.default.fileExists(atPath: server.file("full/big.bin")), "nothing under the final name")
    }

    @Test func anSFTPURLWithoutAHostKeySettingIsAConfigError() throws {
        let fx = try SpoolFixture(url: "sftp://u@127.0.0.1:2222/drop/{path}", extra: "private_key_file = uploader.conf")
        let result = try fx.run(["check-config"])
        #expect(result.exitCode == 78, "\(result)")
        #expect(result.stderr.contains("\(fx.config):6: sftp:// url needs known_hosts or host_key_sha256 in [outbox t]"), "\(result.stderr)")
    }
}
