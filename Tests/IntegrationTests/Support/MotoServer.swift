import Foundation

/// moto (PyPI `moto[server]`) in server mode on a free loopback port: an S3 store for the S3
/// tests, with one bucket and an IAM user whose key it checks signatures against.
final class MotoServer: @unchecked Sendable {
    let port: Int
    let bucket: String
    let accessKeyID: String
    let secretAccessKey: String
    let process: RunningProcess
    private let dir: TempDir

    var endpoint: String { "http://127.0.0.1:\(port)" }

    init(bucket: String = "ingest") throws {
        try TestPython.require("moto.server, boto3, botocore", packages: "moto[server], boto3 or botocore")
        let python = try TestPython.path()
        dir = try TempDir(prefix: "upl-moto")
        port = try FreePort.next()
        self.bucket = bucket
        process = try ProcessRunner.start([python, "-m", "moto.server", "-p", String(port), "-H", "127.0.0.1"],
                                          environment: ["PYTHONUNBUFFERED": "1"], outputDirectory: dir.path)
        let setup: ProcessResult
        do {
            setup = try ProcessRunner.run([python, try PackagePaths.fixture("s3_tool.py"), "setup", "http://127.0.0.1:\(port)", bucket], timeout: 60)
        } catch {
            process.stop()
            throw error
        }
        guard setup.exitCode == 0, let keys = try? JSONSerialization.jsonObject(with: Data(setup.stdout.utf8)) as? [String: String],
              let ak = keys["access_key_id"], let sk = keys["secret_access_key"] else {
            process.stop()
            throw HarnessError("moto setup failed: \(setup)\nmoto stderr:\n\(process.stderrText())")
        }
        accessKeyID = ak
        secretAccessKey = sk
    }

    deinit { process.stop() }

    /// Runs `s3_tool.py COMMAND ARGS` and decodes its JSON answer.
    func tool(_ command: String, _ arguments: [String]) throws -> [String: Any] {
        let result = try ProcessRunner.run([try TestPython.path(), try PackagePaths.fixture("s3_tool.py"), command] + arguments,
                                           timeout: 120)
        guard result.exitCode == 0, let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw HarnessError("s3_tool.py \(command) failed: \(result)")
        }
        return json
    }

    /// The object's SHA-256 and size, read back through boto3, and the checksum the store kept.
    func object(_ key: String) throws -> (sha256: String, size: Int, checksum: String?) {
        let json = try tool("object", [endpoint, accessKeyID, secretAccessKey, bucket, key])
        return (json["sha256"] as? String ?? "", json["size"] as? Int ?? -1, json["checksum_sha256"] as? String)
    }

    /// Multipart uploads still open in the bucket.
    func openUploads() throws -> [String] {
        try tool("uploads", [endpoint, accessKeyID, secretAccessKey, bucket])["uploads"] as? [String] ?? []
    }

    /// moto's request log (werkzeug's access lines on stderr): `METHOD TARGET STATUS` per request.
    /// Werkzeug colours some lines with ANSI escapes even into a file (3.1.9: every status it
    /// does not know, 204 included): they are removed first.
    func requestLog() -> [(method: String, target: String, status: Int)] {
        process.stderrText().replacing(#/\x{1B}\[[0-9;]*m/#, with: "").split(separator: "\n").compactMap { line in
            guard let open = line.firstIndex(of: "\""), let close = line[line.index(after: open)...].firstIndex(of: "\"") else { return nil }
            let request = line[line.index(after: open)..<close].split(separator: " ")
            let status = line[line.index(after: close)...].split(separator: " ").first.flatMap { Int($0) }
            guard request.count >= 2, let status else { return nil }
            return (String(request[0]), String(request[1]), status)
        }
    }

    /// Part numbers of the UploadPart requests the store accepted (2xx), in log order.
    func acceptedParts() -> [Int] {
        requestLog().filter { $0.method == "PUT" && (200...299).contains($0.status) && $0.target.contains("partNumber=") }.compactMap { entry in
            guard let query = entry.target.split(separator: "?").last else { return nil }
            return query.split(separator: "&").first { $0.hasPrefix("partNumber=") }.flatMap { Int($0.dropFirst("partNumber=".count)) }
        }
    }
}
