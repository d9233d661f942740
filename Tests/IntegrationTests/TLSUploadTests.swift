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

/// Issue #5: HTTPS to nginx on loopback with certificates made by `openssl` for the test.
final class TLSUploadTests: XCTestCase {
    private func sink(_ certs: TestCertificates, mutual: Bool = false) throws -> NginxSink {
        try NginxSink(tls: NginxSink.TLS(certificate: certs.serverCert, key: certs.serverKey,
                                         requireClientCertificatesFrom: mutual ? certs.caCert : nil))
    }

    func testAServerSignedByThePrivateCAInCAFileIsTrusted() throws {
        let certs = try TestCertificates()
        let sink = try sink(certs)
        XCTAssertTrue(sink.baseURL.hasPrefix("https://127.0.0.1:"))
        let fx = try SpoolFixture(url: sink.url("tls/{name}"), extra: "ca_file = \(certs.caCert)")
        try fx.drop("secure.bin", Data(repeating: 9, count: 100_000))
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.description)
        XCTAssertEqual(fx.files(in: fx.sent), ["secure.bin"])
        XCTAssertEqual(try sha256(ofFile: sink.file("tls/secure.bin")), try sha256(ofFile: fx.sent + "/secure.bin"))
        XCTAssertEqual(try fx.manifest("secure.bin", in: fx.sent).remote?.url, sink.url("tls/secure.bin"))
    }

    func testAnUntrustedCertificateFailsForGoodSayingItCouldNotBeVerified() throws {
        let certs = try TestCertificates()
        let sink = try sink(certs)
        for (label, extra) in [("system CAs", ""), ("another CA", "ca_file = \(certs.otherCACert)")] {
            let fx = try SpoolFixture(url: sink.url("{name}"), extra: extra + "\nmax_attempts = 5")
            try fx.drop("a.txt", Data("a".utf8))
            let result = try fx.runOnce()
            XCTAssertEqual(result.exitCode, 1, "\(label): \(result)")
            XCTAssertEqual(fx.files(in: fx.retry), ["a.txt"], label)
            let manifest = try fx.manifest("a.txt", in: fx.retry)
            XCTAssertEqual(manifest.state, .failed, "\(label): a certificate error is permanent, not retried")
            XCTAssertNil(manifest.nextAttemptAt, label)
            XCTAssertEqual(manifest.attempts.count, 1, label)
            let reason = manifest.lastError ?? ""
            XCTAssertTrue(reason.contains("certificate") && reason.contains("verif"), "\(label): \(reason)")
        }
        XCTAssertEqual(sink.accessLog().count, 0, "no request reached nginx")
    }

    func testMutualTLSIsAcceptedWithAClientCertificateAndRefusedWithoutOne() throws {
        let certs = try TestCertificates()
        let sink = try sink(certs, mutual: true)
        let with = try SpoolFixture(url: sink.url("m/{name}"), extra: """
            ca_file = \(certs.caCert)
            client_cert = \(certs.clientCert)
            client_key = \(certs.clientKey)
            """)
        try with.drop("with.txt", Data("with".utf8))
        let accepted = try with.runOnce()
        XCTAssertEqual(accepted.exitCode, 0, accepted.description)
        XCTAssertEqual(try String(contentsOfFile: sink.file("m/with.txt"), encoding: .utf8), "with")

        let without = try SpoolFixture(url: sink.url("m/{name}"), extra: "ca_file = \(certs.caCert)")
        try without.drop("without.txt", Data("without".utf8))
        let refused = try without.runOnce()
        XCTAssertEqual(refused.exitCode, 1, refused.description)
        XCTAssertFalse(FileManager.default.fileExists(atPath: sink.file("m/without.txt")))
        let manifest = try without.manifest("without.txt", in: without.retry)
        XCTAssertEqual(manifest.state, .failed, "nginx answers 400: a permanent refusal")
        XCTAssertEqual(manifest.remote?.httpStatus, 400)
        XCTAssertTrue(manifest.lastError?.hasPrefix("HTTP 400") ?? false, manifest.lastError ?? "nil")
        XCTAssertTrue(manifest.remote?.response?.contains("No required SSL certificate was sent") ?? false,
                      "nginx's own explanation is kept: \(manifest.remote?.response ?? "nil")")
    }

    func testInsecureSkipVerifyWarnsAtStartAndUploadsToAnUntrustedServer() throws {
        let certs = try TestCertificates()
        let sink = try sink(certs)
        let fx = try SpoolFixture(url: sink.url("{name}"), extra: "insecure_skip_verify = yes")
        try fx.drop("anyway.txt", Data("anyway".utf8))
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.description)
        XCTAssertEqual(fx.files(in: fx.sent), ["anyway.txt"])
        let warning = result.stderr.split(separator: "\n").first { $0.contains("WARN") && $0.contains("insecure_skip_verify") }
        XCTAssertNotNil(warning, result.stderr)
        let started = result.stderr.split(separator: "\n").firstIndex { $0.contains("watching outbox") } ?? 0
        let warned = result.stderr.split(separator: "\n").firstIndex { $0.contains("insecure_skip_verify") } ?? .max
        XCTAssertLessThan(warned, started, "the warning comes at start, before any upload")
    }
}
