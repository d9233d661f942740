import Foundation

/// Launches Tests/Fixtures/fault_server.py: an HTTP server whose answers are scripted
/// through `POST /__control` and whose received requests are listed by `GET /__requests`.
final class FaultServer: @unchecked Sendable {
    let port: Int
    let process: RunningProcess
    private let dir: TempDir
    /// The test certificate (Tests/Fixtures/test-tls-cert.pem) when serving HTTPS.
    let certificate: String?

    var baseURL: String { "\(certificate == nil ? "http" : "https")://127.0.0.1:\(port)/" }

    /// Starts the server (python3 SCRIPT PORT) and waits for its `PORT <n>` line.
    /// `port` 0 lets the server pick one.
    /// `tls`: serve HTTPS with the test certificate (trust it with `certificate`).
    init(port: Int = 0, tls: Bool = false, extraArguments: [String] = [], scriptPath: String? = nil, startTimeout: TimeInterval = 10) throws {
        let script = try scriptPath ?? PackagePaths.fixture("fault_server.py")
        certificate = tls ? try PackagePaths.fixture("test-tls-cert.pem") : nil
        let tlsArguments = tls ? ["--tls", certificate!, try PackagePaths.fixture("test-tls-key.pem")] : []
        guard ProcessRunner.which("python3") != nil else {
            throw HarnessError("python3 is not installed: run scripts/install-deps.sh")
        }
        dir = try TempDir(prefix: "upl-fault")
        let started = try ProcessRunner.start(
            ["python3", script, String(port)] + tlsArguments + extraArguments,
            environment: ["PYTHONUNBUFFERED": "1"], outputDirectory: dir.path)
        process = started
        do {
            self.port = try waitFor(timeout: startTimeout, poll: 0.02, "a `PORT <n>` line from \(script)") {
                let out = started.stdoutText()
                if let first = out.split(separator: "\n", omittingEmptySubsequences: false).first,
                   out.contains("\n") {
                    let words = first.split(separator: " ")
                    guard words.count == 2, words[0] == "PORT", let n = Int(words[1]), n > 0 else {
                        throw HarnessError("fault server's first line is not `PORT <n>`: \(first)")
                    }
                    return n
                }
                if !started.isRunning {
                    throw HarnessError("fault server exited: \(started.stderrText())")
                }
                return nil
            }
        } catch {
            started.stop()
            throw HarnessError("FaultServer did not start: \(error)\nstderr:\n\(started.stderrText())")
        }
    }

    deinit { process.stop() }

    func url(_ path: String) -> String {
        baseURL + (path.hasPrefix("/") ? String(path.dropFirst()) : path)
    }

    /// Replaces the server's script of behaviours: POST /__control {"script": behaviours}.
    func script(_ behaviours: [[String: Any]]) throws {
        let body = try JSONSerialization.data(withJSONObject: ["script": behaviours])
        _ = try control("POST", "__control", body: body)
    }

    /// Refuses our credentials: every upload request whose `Authorization` is not exactly
    /// `unlessAuthorization` (every one, when nil) is answered `status`. `nil` status lifts the gate.
    func refuseCredentials(status: Int? = 401, unlessAuthorization: String? = nil) throws {
        var gate: [String: Any] = [:]
        if let status { gate["status"] = status }
        if status != nil, let unlessAuthorization { gate["unless_authorization"] = unlessAuthorization }
        _ = try control("POST", "__auth", body: try JSONSerialization.data(withJSONObject: gate))
    }

    /// The requests the server received so far: GET /__requests (a JSON array, or an
    /// object with a "requests" array).
    func requests() throws -> [[String: Any]] {
        let data = try control("GET", "__requests", body: nil)
        let json = try JSONSerialization.jsonObject(with: data)
        if let list = json as? [[String: Any]] { return list }
        if let object = json as? [String: Any], let list = object["requests"] as? [[String: Any]] { return list }
        throw HarnessError("GET /__requests: unexpected JSON: \(String(decoding: data, as: UTF8.self))")
    }

    /// Stops the server (SIGTERM, then SIGKILL).
    func stop() { process.stop() }

    /// One control request through curl; throws unless the status is 2xx.
    private func control(_ method: String, _ path: String, body: Data?) throws -> Data {
        var command = ["curl", "-sS", "--max-time", "10", "-X", method, "-w", "\n%{http_code}"]
        if let certificate { command += ["--cacert", certificate] }
        if body != nil {
            command += ["-H", "Content-Type: application/json", "--data-binary", "@-"]
        }
        let result = try ProcessRunner.run(command + [url(path)], stdin: body, timeout: 20)
        var lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let status = lines.popLast().map(String.init) ?? ""
        guard result.exitCode == 0, status.hasPrefix("2") else {
            throw HarnessError("\(method) /\(path) to the fault server failed (HTTP \(status)): \(result)")
        }
        return Data(lines.joined(separator: "\n").utf8)
    }
}
