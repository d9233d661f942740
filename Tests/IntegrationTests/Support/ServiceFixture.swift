@preconcurrency import Glibc
import Foundation

/// A temporary directory holding an `uploader.conf` with one profile `p` (spool `spool/`)
/// and helpers to start the daemon on it and read what it leaves in the spool.
final class ServiceFixture: @unchecked Sendable {
    let tmp: TempDir
    let binary: UploaderBinary

    var configPath: String { tmp.path("uploader.conf") }
    var spool: String { tmp.path("spool") }
    var outbox: String { spool + "/outbox" }
    var sentDirectory: String { spool + "/sent" }
    var retryDirectory: String { spool + "/retry" }

    init(prefix: String = "upl-svc") throws {
        tmp = try TempDir(prefix: prefix)
        binary = try UploaderBinary()
    }

    /// Writes uploader.conf: `[uploader]` with `global` lines, then `[outbox p]` with `url` and `extra` lines.
    @discardableResult
    func writeConfig(url: String, extra: String = "", global: String = "") throws -> String {
        let text = """
            [uploader]
            log_level = info
            \(global)

            [outbox p]
            spool = spool
            url = \(url)
            connect_timeout = 2s
            \(extra)

            """
        return try tmp.write("uploader.conf", text)
    }

    /// `uploader run --config uploader.conf`, returned once it logs that it runs.
    func startDaemon(environment: [String: String] = [:], arguments: [String] = []) throws -> RunningProcess {
        let process = try binary.start(["run", "--config", configPath] + arguments, environment: environment,
                                       outputDirectory: tmp.path)
        try waitUntil(timeout: 15, "the daemon to start (stderr: \(process.stderrText()))") {
            if !process.isRunning { throw HarnessError("uploader exited early: \(process.stderrText())") }
            return process.stderrText().contains(" running")
        }
        return process
    }

    /// Runs `uploader ARGS --config uploader.conf` to completion.
    func run(_ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 30) throws -> ProcessResult {
        try binary.run(arguments + ["--config", configPath], environment: environment, timeout: timeout)
    }

    /// Writes a file into the outbox the way a producer should: a hidden name, then a rename.
    @discardableResult
    func drop(_ name: String, _ data: Data) throws -> String {
        try FileManager.default.createDirectory(atPath: outbox, withIntermediateDirectories: true)
        let staging = tmp.path(".staging-\(UUID().uuidString)")
        try data.write(to: URL(fileURLWithPath: staging))
        let target = outbox + "/" + name
        guard rename(staging, target) == 0 else { throw HarnessError("rename into the outbox: \(String(cString: strerror(errno)))") }
        return target
    }

    /// The manifest of `name` in `area` (outbox, sent, retry), parsed.
    func manifest(_ area: String, _ name: String) throws -> [String: Any] {
        let path = "\(spool)/\(area)/\(name).manifest.json"
        guard let data = FileManager.default.contents(atPath: path) else { throw HarnessError("no manifest at \(path)") }
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw HarnessError("manifest \(path) is not a JSON object")
        }
        return object
    }

    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: spool + "/" + relative) }

    /// Lays a file and its manifest into `area` as a daemon would have left them.
    func layOut(_ area: String, _ name: String, size: Int, state: String, nextAttemptAt: String? = nil,
                lastError: String? = nil, attempts: Int = 0) throws {
        let dir = "\(spool)/\(area)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Data(repeating: 0x61, count: size).write(to: URL(fileURLWithPath: "\(dir)/\(name)"))
        let now = "2026-01-01T00:00:00.000Z"
        let attemptList: [[String: Any]] = (0..<attempts).map { _ in
            ["started_at": now, "ended_at": now, "bytes_sent": size, "http_status": 503,
             "error": lastError ?? "HTTP 503", "retryable": true]
        }
        let manifest: [String: Any] = [
            "version": 1, "id": UUID().uuidString.lowercased(), "profile": "p", "path": name, "size": size,
            "mtime": now, "sha256": NSNull(), "content_type": "application/octet-stream", "state": state,
            "created_at": now, "attempts": attemptList, "next_attempt_at": nextAttemptAt ?? NSNull(),
            "last_error": lastError ?? NSNull(), "stored_as": "\(area)/\(name)", "remote": NSNull(),
            "sent_at": state == "sent" ? now : NSNull(),
        ]
        let data = try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys])
        try data.write(to: URL(fileURLWithPath: "\(dir)/\(name).manifest.json"))
    }

    /// Sets a file's modification time `seconds` in the past.
    func age(_ path: String, seconds: Double) throws {
        let date = Date().addingTimeInterval(-seconds)
        try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: path)
    }
}

/// SIGTERM, then the exit status; throws when it does not exit within `timeout`.
@discardableResult
func stopDaemon(_ process: RunningProcess, timeout: TimeInterval = 20) throws -> ProcessResult {
    process.terminate()
    return try process.waitForExit(timeout: timeout)
}

/// A port on 127.0.0.1 where nothing listens (connections are refused).
func refusedURL(_ path: String = "x/{path}") throws -> String {
    "http://127.0.0.1:\(try FreePort.next())/\(path)"
}
