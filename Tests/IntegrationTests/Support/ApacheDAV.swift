@preconcurrency import Glibc
import Foundation

/// Apache httpd with mod_dav (Debian's `apache2`, Tests/Fixtures/apache-dav.conf.template) on a
/// free loopback port, with its own config, pid file, logs and DAV lock database in a fresh
/// temporary directory; the distribution's own service is never touched. A PUT into a
/// collection that does not exist gets `409 Conflict`, as from Apache or Nextcloud in the field.
/// Stopped by `stop()` or when the object goes away.
final class ApacheDAV {
    /// The user Apache's children run as (it refuses to serve as root); it owns the directory.
    static let user = "www-data"

    private(set) var port = 0
    /// The DocumentRoot; the DAV area `/dav/` is `root + "/dav"`.
    let root: String
    let runDirectory: String
    private let dir: TempDir
    private var process: RunningProcess?
    private let lock = NSLock()

    /// `http://127.0.0.1:PORT`, no trailing slash.
    var origin: String { "http://127.0.0.1:\(port)" }

    /// Starts Apache and waits until it answers. `basicAuth`: a user and password it then asks
    /// for on `/dav/` (an htpasswd file made with Apache's own `htpasswd`).
    init(basicAuth: (user: String, password: String)? = nil, startTimeout: TimeInterval = 15) throws {
        guard let apache = ProcessRunner.which("apache2") else {
            throw HarnessError("apache2 is not installed (the WebDAV collection tests need Apache mod_dav): "
                + "run scripts/install-deps.sh. This is a test failure, not a skip.")
        }
        guard let account = getpwnam(Self.user) else { throw HarnessError("ApacheDAV: no user \(Self.user) to run Apache's children as") }
        let (uid, gid) = (account.pointee.pw_uid, account.pointee.pw_gid)
        let template = try String(contentsOfFile: try PackagePaths.fixture("apache-dav.conf.template"), encoding: .utf8)
        dir = try TempDir(prefix: "upl-apache")
        root = try dir.mkdir("root")
        runDirectory = try dir.mkdir("run")
        try dir.mkdir("root/dav")
        var auth = ""
        if let basicAuth {
            guard let htpasswd = ProcessRunner.which("htpasswd") else { throw HarnessError("htpasswd (apache2-utils) is missing") }
            let made = try ProcessRunner.run([htpasswd, "-b", "-c", "-B", runDirectory + "/htpasswd", basicAuth.user, basicAuth.password])
            guard made.exitCode == 0 else { throw HarnessError("htpasswd failed: \(made)") }
            auth = """
                    AuthType Basic
                    AuthName "uploader test"
                    AuthBasicProvider file
                    AuthUserFile "\(runDirectory)/htpasswd"
                    Require valid-user
                """
        } else {
            auth = "    Require all granted"
        }
        // Apache's children must reach and write the DAV area and the lock database.
        for path in [dir.path, root, root + "/dav", runDirectory] + (basicAuth == nil ? [] : [runDirectory + "/htpasswd"]) {
            guard chown(path, uid, gid) == 0 else { throw HarnessError("chown \(path): \(String(cString: strerror(errno)))") }
        }

        var attempts = 0
        while true {
            attempts += 1
            port = try FreePort.next()
            let config = template
                .replacingOccurrences(of: "@@LISTEN@@", with: "127.0.0.1:\(port)")
                .replacingOccurrences(of: "@@ROOT@@", with: root)
                .replacingOccurrences(of: "@@RUN@@", with: runDirectory)
                .replacingOccurrences(of: "@@USER@@", with: Self.user)
                .replacingOccurrences(of: "\n@@AUTH@@\n", with: "\n" + auth + "\n")
            let configPath = try dir.write("run/httpd.conf", config)
            let started = try ProcessRunner.start([apache, "-f", configPath, "-k", "start", "-DFOREGROUND"],
                                                  outputDirectory: runDirectory)
            do {
                try waitUntil(timeout: startTimeout, poll: 0.05, "Apache to answer on \(origin)") {
                    if !started.isRunning { throw HarnessError("apache2 exited: \(started.stderrText()) \(self.errorLogText())") }
                    return try self.answers()
                }
                process = started
                return
            } catch {
                started.stop()
                let log = errorLogText() + started.stderrText()
                if attempts < 5, log.contains("Address already in use") { continue }
                throw HarnessError("ApacheDAV: apache2 did not start on 127.0.0.1:\(port): \(error)\nerror.log:\n\(log)")
            }
        }
    }

    deinit { stop() }

    /// Where the file at URL path `/dav/…` (decoded) is stored.
    func file(_ davPath: String) -> String { root + (davPath.hasPrefix("/") ? davPath : "/" + davPath) }

    /// True when Apache answers an HTTP request (any status).
    func answers() throws -> Bool {
        let result = try ProcessRunner.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "2",
                                            "--noproxy", "*", origin + "/"], timeout: 7)
        return result.stdout != "000" && !result.stdout.isEmpty
    }

    /// The access log: `(status, method, path as sent)` per request, the harness's own probes left out.
    func requests() -> [(status: Int, method: String, path: String)] {
        let text = (try? String(contentsOfFile: runDirectory + "/access.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count >= 3, let status = Int(parts[0]), parts[2] != "/" else { return nil }
            return (status, String(parts[1]), String(parts[2]))
        }
    }

    func errorLogText() -> String {
        (try? String(contentsOfFile: runDirectory + "/error.log", encoding: .utf8)) ?? ""
    }

    /// Stops Apache (SIGTERM to its process group, then SIGKILL) and removes its directory (unless KEEP_TMP=1).
    func stop() {
        lock.lock()
        let running = process
        process = nil
        lock.unlock()
        running?.stop()
        dir.remove()
    }
}
