import Foundation
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// A temporary spool with a config file pointing at a destination URL, plus helpers to
/// run the built `uploader` against it and to inspect what ended where.
final class SpoolFixture: @unchecked Sendable {
    let tmp: TempDir
    let binary: UploaderBinary
    let config: String
    let spool: String
    let profile: String
    /// Extra environment for every `uploader` run (for `${VAR}` in the config).
    var environment: [String: String] = [:]

    /// `url` is the full URL template; `extra` is appended to the `[outbox NAME]` section.
    init(url: String, profile: String = "t", extra: String = "", global: String = "log_level = debug") throws {
        tmp = try TempDir()
        binary = try UploaderBinary()
        self.profile = profile
        spool = tmp.path("spool")
        config = tmp.path("uploader.conf")
        try rewrite(url: url, extra: extra, global: global)
        _ = try tmp.mkdir("spool/outbox")
    }

    /// Replaces the config file (for SIGHUP tests and variants).
    func rewrite(url: String, extra: String = "", global: String = "log_level = debug") throws {
        let text = """
            [uploader]
            \(global)

            [outbox \(profile)]
            spool = spool
            url = \(url)
            \(extra)

            """
        _ = try tmp.write("uploader.conf", text)
    }

    var outbox: String { spool + "/outbox" }
    var sent: String { spool + "/sent" }
    var retry: String { spool + "/retry" }

    func run(_ args: [String], timeout: TimeInterval = 60) throws -> ProcessResult {
        try binary.run(args + ["--config", config], environment: environment, timeout: timeout)
    }

    func runOnce(timeout: TimeInterval = 60) throws -> ProcessResult {
        try run(["run", "--once"], timeout: timeout)
    }

    func startDaemon() throws -> RunningProcess {
        let process = try binary.start(["run", "--config", config], environment: environment, outputDirectory: tmp.path("."))
        try waitUntil(timeout: 10, "the daemon to start watching") {
            process.stderrText().contains("watching outbox") || !process.isRunning
        }
        guard process.isRunning else { throw HarnessError("uploader exited at start: \(process.stderrText())") }
        return process
    }

    /// Writes a file into the outbox the way a careless producer does (create, write, close).
    @discardableResult
    func drop(_ name: String, _ data: Data) throws -> String {
        let path = outbox + "/" + name
        guard FileManager.default.createFile(atPath: path, contents: data) else { throw HarnessError("cannot write \(path)") }
        return path
    }

    /// Everything in `dir` but the outbox's own `.upl-tmp/` (where manifests are written before their rename).
    func names(in dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0 != ".upl-tmp" }.sorted()
    }

    /// Names in `dir` that are not manifests or hidden.
    func files(in dir: String) -> [String] {
        names(in: dir).filter { !$0.hasSuffix(".manifest.json") && !$0.hasPrefix(".") }
    }

    func manifest(_ name: String, in dir: String) throws -> Manifest {
        let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name + ".manifest.json"))
        return try Manifest.decode(data)
    }

    /// Raw JSON of a manifest, to check the on-disk shape.
    func manifestJSON(_ name: String, in dir: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name + ".manifest.json"))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw HarnessError("manifest of \(name) is not a JSON object")
        }
        return object
    }
}
