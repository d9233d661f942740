@preconcurrency import Glibc
import Foundation
import XCTest
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// Issue #6: sizes at the edges — nothing at all, and more than 4 GiB (past every 32-bit
/// length) — upload with the right Content-Length and digest, in flat memory.
final class HostileSizesTests: XCTestCase {
    func testAZeroByteFileUploadsAsAnEmptyBody() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{path}"))
        try fx.drop("empty.dat", Data())
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(fx.files(in: fx.sent), ["empty.dat"])
        XCTAssertEqual(try FileSystem.status(path: sink.file("empty.dat")).size, 0)
        let manifest = try fx.manifest("empty.dat", in: fx.sent)
        XCTAssertEqual(manifest.size, 0)
        XCTAssertEqual(manifest.sha256, sha256(of: Data()))
        let entry = sink.accessLog().first
        XCTAssertEqual(entry?["uri"] as? String, "/empty.dat")
        XCTAssertEqual(entry?["content_length"] as? String, "0")
        XCTAssertEqual(entry?["content_digest"] as? String, "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:")
    }

    /// 5 GiB, sparse: the fault server hashes the body as it streams by instead of storing it.
    func testASparseFileOverFourGibibytesUploadsWithTheRightLengthAndDigestInFlatMemory() throws {
        let server = try FaultServer()
        try server.script([["discard": true]])
        let fx = try SpoolFixture(url: server.url("big/{name}"), extra: "stall_timeout = 120s")
        let path = fx.outbox + "/five.img"
        let size: Int64 = 5 << 30
        XCTAssertEqual(try ProcessRunner.run(["truncate", "-s", "5G", path]).exitCode, 0)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.write(contentsOf: Data(repeating: 0xAB, count: 4096))
        try handle.seek(toOffset: UInt64(4 << 30) + 12345)  // past 4 GiB: a 32-bit offset would wrap here
        try handle.write(contentsOf: Data(repeating: 0xCD, count: 4096))
        try handle.seek(toOffset: UInt64(size) - 4096)
        try handle.write(contentsOf: Data(repeating: 0xEF, count: 4096))
        try handle.close()
        let expected = try sha256(ofFile: path)

        let result = try ProcessRunner.run(["/usr/bin/time", "-f", "maxrss_kib=%M", fx.binary.path, "run", "--once", "--config", fx.config],
                                           timeout: 600)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let requests = try server.requests()
        XCTAssertEqual(requests.count, 1)
        let request = requests.first ?? [:]
        XCTAssertEqual(request["path"] as? String, "/big/five.img")
        XCTAssertEqual(request["declared_length"] as? Int64, size, "Content-Length")
        XCTAssertEqual(request["body_length"] as? Int64, size, "bytes received")
        XCTAssertEqual(request["body_sha256"] as? String, expected, "bytes received, hashed by the server")
        let digest = (request["headers"] as? [[String]])?.first { $0.first?.lowercased() == "content-digest" }?.last
        let expectedDigest = Data(stride(from: 0, to: expected.count, by: 2).map {
            UInt8(expected[expected.index(expected.startIndex, offsetBy: $0)...].prefix(2), radix: 16)!
        }).base64EncodedString()
        XCTAssertEqual(digest, "sha-256=:\(expectedDigest):")
        let manifest = try fx.manifest("five.img", in: fx.sent)
        XCTAssertEqual(manifest.size, size)
        XCTAssertEqual(manifest.sha256, expected)
        let rss = result.stderr.split(separator: "\n").compactMap { line -> Int? in
            line.hasPrefix("maxrss_kib=") ? Int(line.dropFirst("maxrss_kib=".count)) : nil
        }.first
        XCTAssertNotNil(rss, "GNU time output missing: \(result.stderr.suffix(400))")
        XCTAssertLessThan(rss ?? .max, 64 * 1024, "peak RSS in KiB during a 5 GiB upload")
    }
}
