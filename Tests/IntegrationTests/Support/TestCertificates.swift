import Foundation

/// A private CA, a server certificate for 127.0.0.1 and a client certificate, made by the
/// `openssl` command in a fresh temporary directory (EC P-256 keys: quick to generate).
final class TestCertificates: @unchecked Sendable {
    private let dir: TempDir

    var caCert: String { dir.path("ca.pem") }
    var serverCert: String { dir.path("server.pem") }
    var serverKey: String { dir.path("server.key") }
    var clientCert: String { dir.path("client.pem") }
    var clientKey: String { dir.path("client.key") }
    /// A second CA that signed nothing here: trusting it alone must fail.
    var otherCACert: String { dir.path("other-ca.pem") }

    init() throws {
        guard ProcessRunner.which("openssl") != nil else {
            throw HarnessError("openssl is not installed: run scripts/install-deps.sh")
        }
        dir = try TempDir(prefix: "upl-certs")
        try selfSigned("ca", subject: "/CN=uploader test CA")
        try selfSigned("other-ca", subject: "/CN=some other CA")
        try signed("server", subject: "/CN=127.0.0.1",
                   extensions: "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n")
        try signed("client", subject: "/CN=uploader test client",
                   extensions: "extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n")
    }

    private func openssl(_ arguments: [String]) throws {
        let result = try ProcessRunner.run(["openssl"] + arguments, currentDirectory: dir.path, timeout: 30)
        guard result.exitCode == 0 else { throw HarnessError("openssl failed: \(result)") }
    }

    private func selfSigned(_ name: String, subject: String) throws {
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                     "-keyout", "\(name).key", "-out", "\(name).pem", "-days", "2", "-subj", subject,
                     "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
    }

    private func signed(_ name: String, subject: String, extensions: String) throws {
        try dir.write("\(name).ext", extensions)
        try openssl(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                     "-keyout", "\(name).key", "-out", "\(name).csr", "-subj", subject])
        try openssl(["x509", "-req", "-in", "\(name).csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                     "-days", "2", "-out", "\(name).pem", "-extfile", "\(name).ext"])
    }
}
