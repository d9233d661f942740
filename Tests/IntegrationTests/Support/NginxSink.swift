import Foundation

/// nginx as a WebDAV PUT sink (Tests/Fixtures/nginx.conf.template), in a fresh
/// temporary directory, on a free loopback port (or a given address, optionally
/// inside a network namespace). PUT /a/b.txt lands in `root + "/a/b.txt"`.
/// Stopped by `stop()` or when the object goes away.
final class NginxSink: @unchecked Sendable {
    /// HTTPS instead of HTTP: the server's certificate and key, and optionally a CA whose
    /// client certificates are required (mutual TLS, `ssl_verify_client on`).
    struct TLS: Sendable {
        var certificate: String
        var key: String
        var requireClientCertificatesFrom: String?
    }

    let host: String
    private(set) var port: Int
    /// Where PUT files land.
    let root: String
    /// Pid file, logs, nginx.conf and temp directories.
    let runDirectory: String
    /// The network namespace nginx runs in, if any.
    let netns: String?
    let tls: TLS?

    private let dir: TempDir
    private var process: RunningProcess?
    private let lock = NSLock()

    /// `http://HOST:PORT/` (`https://` with TLS)
    var baseURL: String { "\(tls == nil ? "http" : "https")://\(host):\(port)/" }

    /// Starts nginx and waits until it answers HTTP. `port` nil picks a free loopback
    /// port (only valid with the default host outside a namespace).
    init(host: String = "127.0.0.1", port: Int? = nil, netns: String? = nil, tls: TLS? = nil,
         startTimeout: TimeInterval = 10) throws {
        guard let nginx = ProcessRunner.which("nginx") else {
            throw HarnessError(
                "nginx is not installed (integration tests need nginx-light as a WebDAV sink): "
                    + "run scripts/install-deps.sh. This is a test failure, not a skip.")
        }
        if port == nil && netns != nil {
            throw HarnessError("NginxSink: inside a namespace give an explicit port")
        }
        let template = try String(contentsOfFile: try PackagePaths.fixture("nginx.conf.template"), encoding: .utf8)
        self.host = host
        self.netns = netns
        self.tls = tls
        dir = try TempDir(prefix: "upl-nginx")
        root = try dir.mkdir("root")
        runDirectory = try dir.mkdir("run")
        self.port = 0

        var attempts = 0
        while true {
            attempts += 1
            self.port = try port ?? FreePort.next()
            let config = template
                .replacingOccurrences(of: "listen @@LISTEN@@;", with: Self.listenDirectives("\(host):\(self.port)", tls: tls))
                .replacingOccurrences(of: "@@ROOT@@", with: root)
                .replacingOccurrences(of: "@@RUN@@", with: runDirectory)
            let configPath = try dir.write("run/nginx.conf", config)
            let prefix = netns.map { ["ip", "netns", "exec", $0] } ?? []
            let started = try ProcessRunner.start(
                prefix + [nginx, "-p", runDirectory + "/", "-c", configPath, "-e", runDirectory + "/error.log"],
                outputDirectory: runDirectory)
            do {
                try waitUntil(timeout: startTimeout, poll: 0.05, "nginx to answer on \(baseURL)") {
                    if !started.isRunning {
                        throw HarnessError("nginx exited: \(started.stderrText()) \(self.errorLogText())")
                    }
                    return try self.answers(timeout: 1)
                }
                process = started
                return
            } catch {
                started.stop()
                let log = errorLogText() + started.stderrText()
                if port == nil, attempts < 5, log.contains("Address already in use") { continue }
                throw HarnessError("NginxSink: nginx did not start on \(host):\(self.port): \(error)\nerror.log:\n\(log)")
            }
        }
    }

    deinit { stop() }

    /// The URL of `path` (relative, no leading slash needed) on the sink.
    func url(_ path: String) -> String {
        baseURL + (path.hasPrefix("/") ? String(path.dropFirst()) : path)
    }

    /// Where a PUT to `path` lands on disk.
    func file(_ path: String) -> String {
        root + "/" + (path.hasPrefix("/") ? String(path.dropFirst()) : path)
    }

    /// True when nginx answers an HTTP request (any status).
    func answers(timeout: TimeInterval = 2) throws -> Bool {
        let prefix = netns.map { ["ip", "netns", "exec", $0] } ?? []
        let result = try ProcessRunner.run(
            prefix + ["curl", "-s", "-k", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "\(timeout)",
                      baseURL + Self.probePath],
            timeout: timeout + 5)
        return result.stdout != "000" && !result.stdout.isEmpty
    }

    /// The template's `listen` line, with the TLS directives when serving HTTPS.
    private static func listenDirectives(_ address: String, tls: TLS?) -> String {
        guard let tls else { return "listen \(address);" }
        var lines = ["listen \(address) ssl;", "ssl_certificate \(tls.certificate);", "ssl_certificate_key \(tls.key);"]
        if let clientCA = tls.requireClientCertificatesFrom {
            lines += ["ssl_verify_client on;", "ssl_client_certificate \(clientCA);"]
        }
        return lines.joined(separator: "\n        ")
    }

    /// The path `answers()` requests; its lines are left out of `accessLogLines()`.
    static let probePath = "__harness_probe"

    /// The access log, one JSON object per line (fields: see the template's
    /// log_format), without the harness's own readiness probes.
    func accessLogLines() -> [String] {
        guard let data = FileManager.default.contents(atPath: runDirectory + "/access.log") else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
            .filter { !$0.contains("\"uri\":\"/\(Self.probePath)\"") }
    }

    /// The access log parsed: method, uri, status, request_length, request_time,
    /// connection, connection_requests, idempotency_key, content_digest, ...
    func accessLog() -> [[String: Any]] {
        accessLogLines().compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    func errorLogText() -> String {
        guard let data = FileManager.default.contents(atPath: runDirectory + "/error.log") else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Stops nginx (SIGTERM, then SIGKILL) and removes its directory (unless KEEP_TMP=1).
    func stop() {
        lock.lock()
        let running = process
        process = nil
        lock.unlock()
        running?.stop()
        dir.remove()
    }
}
