@preconcurrency import Glibc
import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// Runs `Tests/Fixtures/fault_server.py` on 127.0.0.1 for one test and talks to its control endpoints.
final class FaultServer: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// One request as the server received it.
    struct Recorded: Decodable {
        struct Part: Decodable {
            let name: String?
            let filename: String?
            let content_type: String?
            let length: Int
            let sha256: String
            let value: String?
        }
        let method: String
        let path: String
        let headers: [[String]]
        let client_port: Int
        let body_length: Int
        let declared_length: Int
        let complete: Bool
        let body_sha256: String
        let body_base64: String?
        let multipart: [Part]?

        func header(_ name: String) -> String? {
            headers.first { $0[0].lowercased() == name.lowercased() }?[1]
        }
        func headerCount(_ name: String) -> Int { headers.filter { $0[0].lowercased() == name.lowercased() }.count }
        var body: [UInt8]? { body_base64.flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) } }
    }

    let port: Int
    private let process: Process
    private let stdin: Pipe

    let tls: Bool

    var base: String { "\(tls ? "https" : "http")://127.0.0.1:\(port)" }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures").path
    /// Self-signed certificate for 127.0.0.1 that the TLS server presents.
    static let testCertificate = fixtures + "/test-tls-cert.pem"

    /// - Parameter tls: serve HTTPS with the test certificate (control endpoints are then unavailable).
    init(tls: Bool = false) throws {
        self.tls = tls
        let fixture = FaultServer.fixtures + "/fault_server.py"
        guard let python = FaultServer.findPython() else {
            throw Failure(description: "python3 is required by the transfer tests and was not found on PATH")
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [fixture, "0", "--exit-on-stdin-eof"]
            + (tls ? ["--tls", FaultServer.testCertificate, FaultServer.fixtures + "/test-tls-key.pem"] : [])
        let stdout = Pipe()
        stdin = Pipe()
        process.standardOutput = stdout
        process.standardInput = stdin
        try process.run()

        // Read the "PORT n" line on another thread so a hung server fails the test instead of hanging it.
        let box = LineBox()
        let reader = stdout.fileHandleForReading
        Thread.detachNewThread {
            var line = [UInt8]()
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                line += data
                if line.contains(0x0A) { break }
            }
            box.set(String(decoding: line, as: UTF8.self))
        }
        guard box.wait(seconds: 10), let text = box.value,
              text.hasPrefix("PORT "), let port = Int(text.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            process.terminate()
            kill(process.processIdentifier, SIGKILL)
            throw Failure(description: "fault server did not print its port within 10 s (got \(box.value ?? "nothing"))")
        }
        self.port = port
    }

    deinit {
        try? stdin.fileHandleForWriting.close()
        process.terminate()
        let deadline = Date().addingTimeInterval(3)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// The system interpreter first: version-manager shims (pyenv) are slow and wrap the real process.
    private static func findPython() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for dir in ["/usr/bin"] + path.split(separator: ":").map(String.init) where access("\(dir)/python3", X_OK) == 0 {
            return "\(dir)/python3"
        }
        return nil
    }

    /// Queues behaviours consumed one per upload request (`[["status": 503], [:]]`).
    func script(_ behaviours: [[String: Any]]) throws {
        let data = try JSONSerialization.data(withJSONObject: ["script": behaviours])
        _ = try control("/__control", body: [UInt8](data))
    }

    func requests() throws -> [Recorded] {
        try JSONDecoder().decode([Recorded].self, from: Data(control("/__requests", body: [])))
    }

    /// A plain HTTP/1.0 exchange over a socket: control answers can exceed the transport's 64 KiB body cap.
    private func control(_ path: String, body: [UInt8]) throws -> [UInt8] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw SystemError("connect") }
        let message = Array("POST \(path) HTTP/1.0\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
        var sent = 0
        while sent < message.count {
            let n = message.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, 0) }
            guard n > 0 else { throw SystemError("send") }
            sent += n
        }
        var reply = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 { throw SystemError("recv") }
            if n == 0 { break }
            reply += chunk[0..<n]
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let split = (0..<max(0, reply.count - 3)).first(where: { Array(reply[$0..<$0 + 4]) == separator }),
              String(decoding: reply.prefix(16), as: UTF8.self).contains(" 200 ")
        else { throw Failure(description: "control request \(path) failed: \(String(decoding: reply.prefix(200), as: UTF8.self))") }
        return Array(reply[(split + 4)...])
    }
}

/// A value handed from a reader thread to the test, with a deadline.
final class LineBox: @unchecked Sendable {
    private let lock = NSLock()
    private let semaphore = DispatchSemaphore(value: 0)
    private var stored: String?

    func set(_ value: String) {
        lock.lock(); stored = value; lock.unlock()
        semaphore.signal()
    }

    var value: String? { lock.lock(); defer { lock.unlock() }; return stored }

    func wait(seconds: Double) -> Bool { semaphore.wait(timeout: .now() + seconds) == .success }
}

/// A file in a fresh temporary directory, open for reading, removed on deinit.
final class TestFile {
    let directory: String
    let path: String
    let fd: Int32
    let bytes: [UInt8]

    init(_ bytes: [UInt8], name: String = "file.bin") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("transfer-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = directory + "/" + name
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw FaultServer.Failure(description: "cannot create \(path)")
        }
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", path: path) }
        self.bytes = bytes
    }

    deinit {
        close(fd)
        try? FileManager.default.removeItem(atPath: directory)
    }

    var size: Int64 { Int64(bytes.count) }
    var sha256: [UInt8] { SHA256.hash(bytes) }

    /// Pseudo-random but cheap bytes: a random 1 MiB block repeated with a counter.
    static func pattern(_ count: Int) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: min(count, 1 << 20))
        var generator = SystemRandomNumberGenerator()
        for i in stride(from: 0, to: block.count, by: 8) {
            withUnsafeBytes(of: generator.next() as UInt64) { raw in
                for j in 0..<min(8, block.count - i) { block[i + j] = raw[j] }
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(count)
        var round: UInt8 = 0
        while out.count < count {
            block[0] = round
            round &+= 1
            out += block.prefix(count - out.count)
        }
        return out
    }
}

/// Builders for the profile, manifest and values a test upload needs.
enum Fixture {
    static func profile(port: Int, url: String = "/up/{path}", body: BodyFormat = .raw,
                        method: HTTPMethod = .put) throws -> Profile {
        var profile = Profile(name: "test", spool: SpoolPaths(root: "/nonexistent"),
                              destination: .http(URLTemplate(try Template(parsing: "http://127.0.0.1:\(port)\(url)"))))
        profile.body = body
        profile.method = method
        profile.connectTimeout = 5
        profile.stallTimeout = 10
        return profile
    }

    /// The file as the transfer layer sees it; `fd` and `size` stand in for a descriptor or a size that is not the file's.
    static func source(_ file: TestFile, path: RelativePath, sha256: String?, contentType: String = "application/octet-stream",
                       fd: Int32? = nil, size: Int64? = nil) -> UploadSource {
        var st = stat()
        st.st_mode = S_IFREG | 0o644
        st.st_size = off_t(size ?? file.size)
        return UploadSource(fd: fd ?? file.fd, status: FileSystem.Status(st), path: path, id: "01HZX3TESTID",
                            sha256: sha256, contentType: contentType)
    }

    static func values(_ file: TestFile, path: RelativePath) -> TemplateValues {
        TemplateValues(path: path, id: "01HZX3TESTID", sha256: file.sha256.hexString, size: file.size,
                       date: Date(timeIntervalSince1970: 1_767_225_600), profile: "test", hostname: "testhost")
    }

    static func request(_ profile: Profile, _ file: TestFile, path: RelativePath = RelativePath("file.bin"),
                        manifestSHA: Bool = true, contentType: String = "application/octet-stream",
                        rateLimiter: RateLimiter? = nil, cancellation: CancellationFlag = CancellationFlag()) throws -> UploadRequest {
        let source = Fixture.source(file, path: path, sha256: manifestSHA ? file.sha256.hexString : nil, contentType: contentType)
        return try RequestBuilder(profile: profile).request(
            for: source, values: values(file, path: path), rateLimiter: rateLimiter, cancellation: cancellation)
    }
}
