@preconcurrency import Glibc
import Foundation
import Synchronization
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderCore

/// A protocol added by a conformance to `UploadDestination` and one entry in
/// `DestinationFactory`, nothing else: the real runner (claims, manifests, the core's retry,
/// the move to sent/) carries a file to it without knowing which protocol runs.
@Suite(.serialized) struct FakeDestinationTests {
    /// A destination that keeps each file's bytes in memory, by name. Its first attempt of each
    /// file ends "full", retryably; it records in the manifest's `remote` what it got so far,
    /// as a protocol that resumes would.
    final class Shelf: UploadDestination {
        private let shelved = Mutex<[String: [UInt8]]>([:])
        private let tries = Mutex<[String: Int]>([:])

        func bytes(_ name: String) -> [UInt8]? { shelved.withLock { $0[name] } }

        func send(_ upload: DestinationUpload, over transport: any Transport) -> UploadOutcome {
            let name = upload.source.path.logSafe
            let url = "shelf:" + name
            let attempt = tries.withLock { tries -> Int in
                tries[name, default: 0] += 1
                return tries[name, default: 0]
            }
            if attempt == 1 {
                upload.resume.keep("shelf") { $0.remote = Manifest.Remote(url: url) }
                return (.failure(.broken("shelf full", bytesSent: 0)), .retryLater(reason: "shelf full", retryAfter: nil))
            }
            guard upload.resume.saved.remote?.url == url else {
                return (.failure(.other("no record of the first attempt")), .permanent(reason: "no record of the first attempt"))
            }
            var bytes = [UInt8](repeating: 0, count: Int(upload.source.size))
            let read = bytes.withUnsafeMutableBytes { pread(upload.source.fd, $0.baseAddress, $0.count, 0) }
            guard read == bytes.count else { return (.failure(.localRead("short read")), .permanent(reason: "short read")) }
            shelved.withLock { $0[name] = bytes }
            upload.request.progress?(Int64(read))
            let answer = UploadResponse(status: 201, bytesSent: Int64(read), effectiveURL: url)
            return (.success(answer), .sent(answer))
        }
    }

    @Test func aFileDroppedReachesAFakeProtocolAndIsFiledInSentWithItsManifest() throws {
        let url = "http://127.0.0.1:9/shelf-\(UUID().uuidString)/{name}"
        let shelf = Shelf()
        DestinationFactory.add(url: url) { _ in shelf }
        defer { DestinationFactory.remove(url: url) }
        let rig = try ProfileRunnerSeamTests.Rig([], extra: "backoff = 10s\nmax_backoff = 10s", url: url)
        defer { rig.stop() }
        let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try rig.drop("a.bin", bytes)
        rig.runner.begin(netlink: nil)

        rig.waitForOwner { rig.manifest("a.bin", in: .retry)?.state == .retry }
        let waiting = try #require(rig.manifest("a.bin", in: .retry), "the first attempt ends retryably: the file waits in retry/")
        #expect(waiting.lastError == "shelf full")
        rig.advance(by: 11)
        rig.waitForOwner { rig.manifest("a.bin", in: .sent) != nil }

        let sent = try #require(rig.manifest("a.bin", in: .sent), "the file in sent/ with its manifest")
        #expect(sent.state == .sent)
        #expect(sent.attempts.count == 2 && sent.attempts[0].retryable == true && sent.attempts[1].httpStatus == 201, "\(sent.attempts)")
        #expect(sent.remote?.url == "shelf:a.bin")
        #expect(shelf.bytes("a.bin") == bytes, "the protocol got the file's exact bytes")
        #expect(sent.sha256 == SHA256.hash(bytes).hexString)
        #expect(rig.server.received.isEmpty, "no HTTP request: the runner used the fake protocol alone")
        #expect(FileManager.default.fileExists(atPath: rig.spool.paths.sent + "/a.bin"))
    }
}
