@preconcurrency import Glibc
import Foundation

/// An OpenSSH `sshd` of the test's own on 127.0.0.1 and a free port, set up as the usual
/// drop zone: one login, key-only, `ChrootDirectory` (root-owned, outside /tmp as OpenSSH
/// requires) with `ForceCommand internal-sftp`, a `drop/` directory the login may write.
/// Its own ed25519 host key; never the system's sshd or its keys.
final class SSHServer: @unchecked Sendable {
    static let user = "upl-sftp-drop"
    /// Where chroots go: every component root-owned and not group- or world-writable.
    static let chrootBase = "/run/uploader-sftp-tests"

    let tmp: TempDir
    let port: Int
    let chroot: String
    let process: RunningProcess
    /// The host key's `SHA256:…` fingerprint, as `ssh-keygen -lf` prints it.
    let hostKeyFingerprint: String
    /// A known_hosts file with the `[127.0.0.1]:PORT` entry of the host key.
    let knownHosts: String
    /// An ed25519 private key the login accepts.
    let userKey: String
    private var mounts: [String] = []

    init() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd") else {
            throw HarnessError("/usr/sbin/sshd is missing: run scripts/install-deps.sh (openssh-server)")
        }
        try Self.ensureUser()
        tmp = try TempDir(prefix: "upl-sshd")
        try Self.sh("mkdir -p /run/sshd \(Self.chrootBase) && chmod 755 \(Self.chrootBase)")
        chroot = Self.chrootBase + "/" + UUID().uuidString
        try Self.sh("mkdir -m 755 \(chroot) && mkdir \(chroot)/drop && chown \(Self.user) \(chroot)/drop")
        try Self.sh("ssh-keygen -q -t ed25519 -N '' -C host -f \(tmp.path("host_key"))")
        userKey = try Self.newKey(in: tmp, name: "user_key")
        _ = try tmp.mkdir("authorized")
        try FileManager.default.copyItem(atPath: userKey + ".pub", toPath: tmp.path("authorized/\(Self.user)"))
        // sshd reads authorized keys as the login: the way there must be open to it.
        try Self.sh("chmod 755 \(tmp.path) \(tmp.path("authorized")) && chmod 644 \(tmp.path("authorized/\(Self.user)"))")
        hostKeyFingerprint = try Self.fingerprint(ofPublicKey: tmp.path("host_key.pub"))
        var started: (Int, RunningProcess)?
        for _ in 0..<3 where started == nil {
            let port = try FreePort.next()
            _ = try tmp.write("sshd_config", """
                Port \(port)
                ListenAddress 127.0.0.1
                HostKey \(tmp.path("host_key"))
                AuthorizedKeysFile \(tmp.path("authorized"))/%u
                UsePAM no
                PidFile none
                StrictModes no
                PasswordAuthentication no
                KbdInteractiveAuthentication no
                PermitRootLogin no
                LogLevel VERBOSE
                Subsystem sftp internal-sftp
                Match User \(Self.user)
                  ChrootDirectory \(chroot)
                  ForceCommand internal-sftp
                  AllowTcpForwarding no
                  X11Forwarding no

                """)
            let process = try ProcessRunner.start(["/usr/sbin/sshd", "-f", tmp.path("sshd_config"), "-D", "-e"], outputDirectory: tmp.path("."))
            try waitUntil(timeout: 10, "sshd to listen") {
                process.stderrText().contains("Server listening") || !process.isRunning
            }
            if process.isRunning { started = (port, process) }
        }
        guard let started else { throw HarnessError("sshd did not start on three free ports") }
        (port, process) = started
        let publicKey = try String(contentsOfFile: tmp.path("host_key.pub"), encoding: .utf8).split(separator: " ").prefix(2).joined(separator: " ")
        knownHosts = try tmp.write("known_hosts", "[127.0.0.1]:\(port) \(publicKey)\n")
    }

    deinit {
        process.stop()
        for mount in mounts.reversed() { _ = try? ProcessRunner.run(["umount", "-l", mount]) }
        _ = try? ProcessRunner.run(["rm", "-rf", chroot])
    }

    /// `sftp://USER@127.0.0.1:PORT/drop/PATH`.
    func url(_ path: String) -> String { "sftp://\(Self.user)@127.0.0.1:\(port)/drop/\(path)" }

    /// A path under the chroot's `drop/`, as the server stores it.
    func file(_ relative: String) -> String { chroot + "/drop/" + relative }

    /// Every file under `drop/`, relative to it.
    func files() -> [String] {
        let root = chroot + "/drop/"
        let all = FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []
        return all.filter { var dir: ObjCBool = false; return FileManager.default.fileExists(atPath: root + $0, isDirectory: &dir) && !dir.boolValue }.sorted()
    }

    /// sshd's log (its stderr).
    var log: String { process.stderrText() }

    /// Kills every session sshd has forked (each connection's monitor and the login's process
    /// under it, which holds the socket too); sshd itself stays.
    func cutSessions() {
        func children(of pid: Int32) -> [Int32] {
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { Int32($0) }
        }
        var sessions: [Int32] = []
        var frontier = children(of: process.pid)
        while let pid = frontier.popLast() {
            sessions.append(pid)
            frontier += children(of: pid)
        }
        for pid in sessions { _ = Glibc.kill(pid, SIGKILL) }
    }

    /// A tmpfs of `size` mounted at `drop/RELATIVE`, writable by the login: a disk that fills.
    func mountSmallDisk(_ relative: String, size: String) throws {
        let path = file(relative)
        let uid = getpwnam(Self.user).pointee.pw_uid
        try Self.sh("mkdir -p '\(path)' && mount -t tmpfs -o size=\(size),uid=\(uid),mode=0755 tmpfs '\(path)'")
        mounts.append(path)
    }

    /// A new ed25519 key pair in `dir` (no passphrase); the private key's path.
    static func newKey(in dir: TempDir, name: String) throws -> String {
        try sh("ssh-keygen -q -t ed25519 -N '' -C \(name) -f \(dir.path(name))")
        return dir.path(name)
    }

    static func fingerprint(ofPublicKey path: String) throws -> String {
        let out = try sh("ssh-keygen -lf \(path)").stdout
        guard let fingerprint = out.split(separator: " ").first(where: { $0.hasPrefix("SHA256:") }) else {
            throw HarnessError("no fingerprint in ssh-keygen -lf output: \(out)")
        }
        return String(fingerprint)
    }

    /// The login: no password (`*`, not locked: sshd refuses a locked account even for keys).
    private static func ensureUser() throws {
        if getpwnam(user) == nil {
            try sh("useradd --user-group --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin \(user)")
        }
        try sh("usermod -p '*' \(user)")
    }

    @discardableResult
    static func sh(_ script: String) throws -> ProcessResult {
        let result = try ProcessRunner.run(["sh", "-c", script])
        guard result.exitCode == 0 else { throw HarnessError("`\(script)` failed: \(result)") }
        return result
    }
}
