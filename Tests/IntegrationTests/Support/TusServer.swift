import Foundation

/// tuspyserver (PyPI, a FastAPI router) under uvicorn on a free loopback port, started from
/// Tests/Fixtures/tus_server.py: a real third-party tus 1.0 server whose every request is
/// recorded (method, headers, body length and SHA-256, answer), with faults on demand.
final class TusServer: Sendable {
    /// One request as the server saw it.
    struct Request {
        var method: String
        var path: String
        /// Lowercased names.
        var headers: [String: String]
        var bodyBytes: Int
        var bodySHA256: String
        var status: Int?
        var responseHeaders: [String: String]
        /// Answered by the fixture's fault, not by tuspyserver.
        var injected: Bool

        var uploadOffset: Int? { headers["upload-offset"].flatMap { Int($0) } }
        var answeredOffset: Int? { responseHeaders["upload-offset"].flatMap { Int($0) } }
    }

    let port: Int
    let process: RunningProcess
    /// Where tuspyserver keeps each upload as `<id>` (+ `<id>.info`).
    let filesDir: String
    private let logPath: String
    private let dir: TempDir

    /// The creation endpoint (`url =` of a tus profile).
    var creationURL: String { "http://127.0.0.1:\(port)/files/" }

    /// `failPatches`: 1-based numbers of the PATCHes answered 503 (their body read and dropped).
    /// `checksum`: advertise the checksum extension with sha256.
    init(failPatches: [Int] = [], checksum: Bool = false) throws {
        try TestPython.require("tuspyserver, uvicorn, fastapi", packages: "tuspyserver, uvicorn or fastapi")
        dir = try TempDir(prefix: "upl-tus")
        filesDir = try dir.mkdir("files")
        logPath = dir.path("requests.jsonl")
        let options = failPatches.flatMap { ["--fail-patch", String($0)] } + (checksum ? ["--checksum"] : [])
        let started = try ProcessRunner.start([try TestPython.path(), try PackagePaths.fixture("tus_server.py"), filesDir, logPath] + options,
                                              environment: ["PYTHONUNBUFFERED": "1"], outputDirectory: dir.path)
        process = started
        do {
            port = try waitFor(timeout: 30, "a `PORT <n>` line from tus_server.py") {
                let out = started.stdoutText()
                if let line = out.split(separator: "\n").first, out.contains("\n") {
                    guard line.hasPrefix("PORT "), let n = Int(line.dropFirst(5)) else { throw HarnessError("unexpected first line: \(line)") }
                    return n
                }
                if !started.isRunning { throw HarnessError("tus_server.py exited: \(started.stderrText())") }
                return nil
            }
            try waitUntil(timeout: 30, "tus_server.py to accept connections") {
                if !started.isRunning { throw HarnessError("tus_server.py exited: \(started.stderrText())") }
                return Self.accepts(port: port)
            }
        } catch {
            started.stop()
            throw HarnessError("tus server did not start: \(error)\nstderr:\n\(started.stderrText())")
        }
    }

    deinit { process.stop() }

    /// Every request recorded so far, in the order they ended.
    func requests() throws -> [Request] {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { line in
            guard let json = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw HarnessError("tus server log line is not a JSON object: \(line)")
            }
            return Request(method: json["method"] as? String ?? "", path: json["path"] as? String ?? "",
                           headers: json["headers"] as? [String: String] ?? [:], bodyBytes: json["body_bytes"] as? Int ?? 0,
                           bodySHA256: json["body_sha256"] as? String ?? "", status: json["status"] as? Int,
                           responseHeaders: json["response_headers"] as? [String: String] ?? [:],
                           injected: json["injected"] as? Bool ?? false)
        }
    }

    /// Waits until the server handles no request: one cut by a kill -9 has been dealt with
    /// (tuspyserver keeps what arrived of it) and recorded.
    func waitUntilIdle() throws {
        try waitUntil(timeout: 30, "the tus server to finish every request") {
            (try? String(contentsOfFile: logPath + ".inflight", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) == "0"
        }
    }

    /// The bytes the server holds for the upload at `uploadURL`, by SHA-256 and size.
    func stored(_ uploadURL: String) throws -> (sha256: String, size: Int) {
        let file = filesDir + "/" + (uploadURL.split(separator: "/").last.map(String.init) ?? "")
        let size = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? -1
        return (try sha256(ofFile: file), size)
    }

    func holds(_ uploadURL: String) -> Bool {
        FileManager.default.fileExists(atPath: filesDir + "/" + (uploadURL.split(separator: "/").last.map(String.init) ?? ""))
    }

    /// Makes the server forget every upload (as one that expired them or lost its disk).
    func forgetEverything() throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: filesDir) {
            try FileManager.default.removeItem(atPath: filesDir + "/" + name)
        }
    }

    private static func accepts(port: Int) -> Bool {
        let result = try? ProcessRunner.run(["curl", "-s", "-o", "/dev/null", "--max-time", "5", "-X", "OPTIONS",
                                             "http://127.0.0.1:\(port)/files/"], timeout: 10)
        return result?.exitCode == 0
    }
}
