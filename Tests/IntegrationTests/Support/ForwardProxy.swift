import Foundation

/// Tests/Fixtures/forward_proxy.py on 127.0.0.1: a forwarding HTTP proxy that sends every
/// request to one upstream port on 127.0.0.1 whatever host the request names, and records each.
final class ForwardProxy: Sendable {
    /// One request the proxy answered.
    struct Forwarded {
        var method: String
        /// As the client wrote it: `http://127.0.0.1:PORT/path` for a proxied request.
        var target: String
        var status: Int
        var proxyAuthorization: String?
    }

    let port: Int
    let process: RunningProcess
    private let logPath: String
    private let dir: TempDir

    /// `http://127.0.0.1:PORT`
    var url: String { "http://127.0.0.1:\(port)" }

    /// `port`: a given one (the test configured it before starting the proxy), else one the kernel picks.
    /// `failOnce`: the first request whose path contains its text is answered its status, not forwarded.
    init(upstreamPort: Int, port: Int? = nil, requireAuth: String? = nil, failOnce: (text: String, status: Int)? = nil) throws {
        dir = try TempDir(prefix: "upl-proxy")
        logPath = dir.path("forwarded.jsonl")
        let options = (port.map { ["--port", String($0)] } ?? []) + (requireAuth.map { ["--require-auth", $0] } ?? [])
            + (failOnce.map { ["--fail-once", $0.text, String($0.status)] } ?? [])
        let started = try ProcessRunner.start(["python3", try PackagePaths.fixture("forward_proxy.py"), String(upstreamPort), logPath] + options,
                                              environment: ["PYTHONUNBUFFERED": "1"], outputDirectory: dir.path)
        process = started
        do {
            self.port = try waitFor(timeout: 20, "a `PORT <n>` line from forward_proxy.py") {
                let out = started.stdoutText()
                if let line = out.split(separator: "\n").first, out.contains("\n") {
                    guard line.hasPrefix("PORT "), let n = Int(line.dropFirst(5)) else { throw HarnessError("unexpected first line: \(line)") }
                    return n
                }
                if !started.isRunning { throw HarnessError("forward_proxy.py exited: \(started.stderrText())") }
                return nil
            }
        } catch {
            started.stop()
            throw HarnessError("forwarding proxy did not start: \(error)\nstderr:\n\(started.stderrText())")
        }
    }

    deinit { process.stop() }

    /// Every request answered so far, in order.
    func forwarded() throws -> [Forwarded] {
        guard let data = FileManager.default.contents(atPath: logPath) else { return [] }
        return try String(decoding: data, as: UTF8.self).split(separator: "\n").map { line in
            guard let json = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw HarnessError("proxy log line is not a JSON object: \(line)")
            }
            return Forwarded(method: json["method"] as? String ?? "", target: json["target"] as? String ?? "",
                             status: json["status"] as? Int ?? 0, proxyAuthorization: json["proxy_authorization"] as? String)
        }
    }
}
