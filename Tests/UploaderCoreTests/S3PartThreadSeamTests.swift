@preconcurrency import Glibc
import Foundation
import Synchronization
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderTransfer

/// An S3 multipart upload's part threads send on the transport the runner's seams give and read
/// the file through the source's own `read`, as the worker's requests do: a test transport or a
/// simulated disk sees every request and read of the upload, not only the worker's.
@Suite("S3 part threads run on the destination's seams")
struct S3PartThreadSeamTests {
    /// A store that answers each S3 call and keeps what it got.
    final class Store: Transport, Sendable {
        let got = Mutex<[(method: HTTPMethod, url: String, payloadHash: String, body: [UInt8])]>([])

        func send(_ request: UploadRequest) -> Result<UploadResponse, TransferFailure> {
            var body: [UInt8] = []
            for segment in request.body.segments {
                guard case .bytes(let bytes) = segment else {
                    return .failure(.localRead("the part's body was to be read from a descriptor by the test transport"))
                }
                body += bytes
            }
            let hash = request.headers.first { $0.name == "x-amz-content-sha256" }?.value ?? ""
            got.withLock { $0.append((request.method, request.url, hash, body)) }
            if request.method == .post && request.url.contains("uploads") {
                return .success(UploadResponse(status: 200, body: "<InitiateMultipartUploadResult><UploadId>u1</UploadId></InitiateMultipartUploadResult>"))
            }
            return .success(UploadResponse(status: 200, etag: "\"e\""))
        }
    }

    /// The transport of a part: reads its range through the source's `read` (no real descriptor
    /// exists) and hands the bytes to the store.
    final class PartReader: Transport {
        let store: Store
        let source: UploadSource
        init(store: Store, source: UploadSource) {
            self.store = store
            self.source = source
        }
        func send(_ request: UploadRequest) -> Result<UploadResponse, TransferFailure> {
            var copy = request
            copy.body = RequestBody(request.body.segments.map { segment in
                guard case .file(_, let offset, let length) = segment else { return segment }
                var bytes = [UInt8](repeating: 0, count: Int(length))
                let n = bytes.withUnsafeMutableBytes { (try? source.read(source.fd, $0, offset, "a.bin")) ?? -1 }
                return .bytes(n == Int(length) ? bytes : [])
            })
            return store.send(copy)
        }
    }

    @Test func everyPartGoesThroughTheInjectedTransportAndIsHashedFromTheInjectedRead() throws {
        let content = (0..<2500).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let source = S3Multipart.source(content)
        let store = Store()
        let outcome = try S3Multipart.upload(source, size: content.count, worker: PartReader(store: store, source: source)) {
            PartReader(store: store, source: source)
        }
        guard case .sent = outcome.disposition else {
            Issue.record("\(outcome.disposition)")
            return
        }
        let got = store.got.withLock { $0 }
        let parts = got.filter { $0.method == .put }.sorted { $0.url < $1.url }
        #expect(parts.count == 3, "three parts of 1000, 1000 and 500 bytes reached the injected transport")
        #expect(parts.flatMap(\.body) == content, "the store holds the file's exact bytes")
        for part in parts {
            #expect(part.payloadHash == SHA256.hash(part.body).hexString, "each part's hash is read through the source's read")
        }
        #expect(got.first?.method == .post && got.last?.method == .post, "created, then completed")
    }
}
