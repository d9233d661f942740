import Foundation
import Testing
@testable import UploaderSupport

/// The built uploader against Debian's vsftpd (started by each test on loopback with a
/// certificate for 127.0.0.1, TLS required): explicit `AUTH TLS` and implicit TLS deliver
/// whole files under their final names through a temporary one; a certificate from another CA
/// fails the file with a clear line.
@Suite(.serialized) struct FTPSUploadTests {
    func extra(_ server: FTPServer, ca: String? = nil, more: String = "") -> String {
        "password_file = \(server.passwordFile)\nca_file = \(ca ?? server.certificates.caCert)\nbackoff = 1s\n\(more)"
    }

    func random(_ count: Int, seed: UInt8) -> Data { Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ Int(seed) &+ $0 >> 9) }) }

    /// A daemon, not `run --once`: vsftpd 3.0.3 under OpenSSL 3 now and then answers `426` at the
    /// end of a TLS data upload whose bytes all arrived; that attempt is retried (after `backoff`)
    /// and finishes from what the server holds, which is what an operator sees too.
    @Test func explicitTLSDeliversWholeFilesIntoMadeDirectoriesAndANewVersionReplacesTheOld() throws {
        let server = try FTPServer()
        let fx = try SpoolFixture(url: server.url("drop/{date}/{path}"), extra: extra(server, more: "recursive = yes"))
        let big = random(2_500_000, seed: 1)
        let small = random(999, seed: 2)
        try fx.drop("big.bin", big)
        try FileManager.default.createDirectory(atPath: fx.outbox + "/cam1", withIntermediateDirectories: true)
        try fx.drop("cam1/small.jpg", small)
        let daemon = try fx.startDaemon()
        defer { daemon.stop() }
        let day = Timestamp.day(Date())
        try waitUntil(timeout: 30, "both files in sent/ (daemon: \(daemon.stderrText()))") {
            FileManager.default.fileExists(atPath: fx.sent + "/big.bin.manifest.json")
                && FileManager.default.fileExists(atPath: fx.sent + "/cam1/small.jpg.manifest.json")
        }
        #expect(server.files() == ["drop/\(day)/big.bin", "drop/\(day)/cam1/small.jpg"], "no temporary left: \(server.files())")
        #expect(try sha256(ofFile: server.file("drop/\(day)/big.bin")) == sha256(of: big))
        #expect(try sha256(ofFile: server.file("drop/\(day)/cam1/small.jpg")) == sha256(of: small))
        let remote = try #require(try fx.manifestJSON("big.bin", in: fx.sent)["remote"] as? [String: Any])
        #expect(remote["protocol"] as? String == "ftp" && remote["remote_path"] as? String == "drop/\(day)/big.bin")
        #expect(remote["bytes_confirmed"] as? Int == big.count)

        let second = random(4321, seed: 3)
        try fx.drop("big.bin", second)
        try waitUntil(timeout: 30, "the new version on the server (daemon: \(daemon.stderrText()))") {
            (try? sha256(ofFile: server.file("drop/\(day)/big.bin"))) == sha256(of: second) && !FileManager.default.fileExists(atPath: fx.outbox + "/big.bin")
        }
        #expect(server.files() == ["drop/\(day)/big.bin", "drop/\(day)/cam1/small.jpg"])
    }

    @Test func implicitTLSDelivers() throws {
        let server = try FTPServer(implicit: true)
        let fx = try SpoolFixture(url: server.url("{path}", scheme: "ftps"), extra: extra(server))
        let data = random(123_456, seed: 4)
        try fx.drop("f.bin", data)
        let daemon = try fx.startDaemon()
        defer { daemon.stop() }
        try waitUntil(timeout: 30, "f.bin in sent/ (daemon: \(daemon.stderrText()))") { fx.files(in: fx.sent) == ["f.bin"] }
        #expect(server.files() == ["f.bin"])
        #expect(try sha256(ofFile: server.file("f.bin")) == sha256(of: data))
    }

    @Test func aCertificateFromAnotherCAFailsTheFileWithAClearLine() throws {
        let server = try FTPServer()
        let fx = try SpoolFixture(url: server.url("{path}"), extra: extra(server, ca: server.certificates.otherCACert))
        try fx.drop("f.bin", random(100, seed: 5))
        let run = try fx.runOnce()
        #expect(run.exitCode == 1, "\(run)")
        #expect(fx.files(in: fx.retry) == ["f.bin"])
        let manifest = try fx.manifest("f.bin", in: fx.retry)
        #expect(manifest.state == .failed)
        #expect(manifest.lastError?.hasPrefix("TLS certificate verification failed") == true, "\(manifest.lastError ?? "")")
        #expect(server.files().isEmpty)
    }
}
