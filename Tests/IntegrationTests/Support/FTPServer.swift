@preconcurrency import Glibc
import Foundation

/// A `vsftpd` of the test's own on 127.0.0.1 and a free port, TLS required for the login and
/// the data (explicit `AUTH TLS`, or implicit with `implicit`), passive mode, a certificate for
/// 127.0.0.1 from `TestCertificates`. One local login with a password made up per server, whose
/// directory after login (`local_root`) is `root`. Never the system's vsftpd or its config.
final class FTPServer: @unchecked Sendable {
    static let user = "upl-ftp-drop"

    let tmp: TempDir
    let certificates: TestCertificates
    let port: Int
    let process: RunningProcess
    /// A file holding the login's password.
    let passwordFile: String
    /// The login directory.
    let root: String

    init(implicit: Bool = false) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/vsftpd") else {
            throw HarnessError("/usr/sbin/vsftpd is missing: run scripts/install-deps.sh (vsftpd)")
        }
        tmp = try TempDir(prefix: "upl-vsftpd")
        certificates = try TestCertificates()
        let password = UUID().uuidString
        // PAM's vsftpd service wants a shell listed in /etc/shells; the password is new each time.
        // vsftpd changes into the login's home before `local_root`, and ends the session when it
        // cannot: the home is `/`, which every machine has (`/nonexistent` is missing on most).
        if getpwnam(Self.user) == nil {
            try SSHServer.sh("useradd --user-group --home-dir / --no-create-home --shell /bin/sh \(Self.user)")
        } else if String(cString: getpwnam(Self.user).pointee.pw_dir) != "/" {
            try SSHServer.sh("usermod --home / \(Self.user)")
        }
        let set = try ProcessRunner.run(["chpasswd"], stdin: Data("\(Self.user):\(password)\n".utf8))
        guard set.exitCode == 0 else { throw HarnessError("chpasswd failed: \(set)") }
        passwordFile = try tmp.write("password", password + "\n")
        root = tmp.path("root")
        try SSHServer.sh("chmod 755 \(tmp.path) && mkdir -m 755 \(root) && chown \(Self.user) \(root) && mkdir -p /var/run/vsftpd/empty")
        var started: (Int, RunningProcess)?
        for _ in 0..<3 where started == nil {
            let port = try FreePort.next()
            let passive = try FreePort.next()
            _ = try tmp.write("vsftpd.conf", """
                listen=YES
                listen_ipv6=NO
                listen_address=127.0.0.1
                listen_port=\(port)
                background=NO
                anonymous_enable=NO
                local_enable=YES
                write_enable=YES
                local_umask=022
                local_root=\(root)
                pam_service_name=vsftpd
                secure_chroot_dir=/var/run/vsftpd/empty
                seccomp_sandbox=NO
                ssl_enable=YES
                implicit_ssl=\(implicit ? "YES" : "NO")
                force_local_logins_ssl=YES
                force_local_data_ssl=YES
                require_ssl_reuse=NO
                rsa_cert_file=\(certificates.serverCert)
                rsa_private_key_file=\(certificates.serverKey)
                pasv_enable=YES
                pasv_address=127.0.0.1
                pasv_min_port=\(passive)
                pasv_max_port=\(min(passive + 40, 65535))
                xferlog_enable=YES
                vsftpd_log_file=\(tmp.path("vsftpd.log"))

                """)
            let process = try ProcessRunner.start(["/usr/sbin/vsftpd", tmp.path("vsftpd.conf")], outputDirectory: tmp.path("."))
            let listening = (try? waitFor(timeout: 10, "vsftpd to listen") { () -> Bool? in
                !process.isRunning ? false : (TCPConnect.succeeds(port: port) ? true : nil)
            }) ?? false
            if listening { started = (port, process) } else { process.stop() }
        }
        guard let started else { throw HarnessError("vsftpd did not start on three free ports") }
        (port, process) = started
    }

    deinit { process.stop() }

    /// `ftp://` (or `ftps://` when implicit) `USER@127.0.0.1:PORT/PATH`, relative to `root`.
    func url(_ path: String, scheme: String = "ftp") -> String { "\(scheme)://\(Self.user)@127.0.0.1:\(port)/\(path)" }

    func file(_ relative: String) -> String { root + "/" + relative }

    /// Every file under `root`, relative to it.
    func files() -> [String] {
        let all = FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []
        return all.filter { var dir: ObjCBool = false; return FileManager.default.fileExists(atPath: file($0), isDirectory: &dir) && !dir.boolValue }.sorted()
    }
}

/// Whether something accepts a TCP connection on 127.0.0.1:`port` now.
enum TCPConnect {
    static func succeeds(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port)).bigEndian
        addr.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
