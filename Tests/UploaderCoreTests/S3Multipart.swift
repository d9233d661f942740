@preconcurrency import Glibc
import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderTransfer

/// A multipart upload set up as the runner sets one up, over transports a test supplies: parts
/// of 1,000 bytes, two at a time, SHA-256 on each.
enum S3Multipart {
    /// A file that exists only behind the source's `read` and `currentStatus`, as on a simulated disk.
    static func source(_ content: [UInt8]) -> UploadSource {
        var st = stat()
        st.st_mode = S_IFREG | 0o644
        st.st_size = off_t(content.count)
        let status = FileSystem.Status(st)
        var source = UploadSource(fd: -1, status: status, path: RelativePath("a.bin"), id: "id-1", sha256: nil,
                                  contentType: "application/octet-stream") { _, _ in status }
        source.read = { _, buffer, offset, _ in
            let n = max(0, min(buffer.count, content.count - Int(offset)))
            content.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + Int(offset), byteCount: n) }
            return n
        }
        return source
    }

    /// Uploads `source` through `S3Uploader`: the worker's requests on `worker`, each part
    /// thread's on a transport from `partTransport`, under `cancellation`, from the record's
    /// multipart upload `resuming`.
    static func upload(_ source: UploadSource, size: Int, worker: Transport, cancellation: CancellationFlag = CancellationFlag(),
                       resuming: S3UploadState? = nil, partTransport: @escaping @Sendable () -> Transport) throws -> UploadOutcome {
        let endpoint = try #require(S3Endpoint(parsing: "http://127.0.0.1:9"))
        var target = S3Target(bucket: "b", key: try Template(parsing: "{path}"), endpoint: endpoint, endpointGiven: true, region: "us-east-1",
                              pathStyle: true, accessKeyID: "AKID", secretAccessKey: Secret(value: "secret"), sessionToken: nil)
        target.multipartThreshold = 1000
        target.partSize = 1000
        target.partConcurrency = 2
        var profile = Profile(name: "test", spool: SpoolPaths(root: "/nonexistent"), destination: .s3(target))
        profile.digest = .sha256
        let threads = DestinationThreads(makeTransport: partTransport)
        let uploader = S3Uploader(profile: profile, target: target, logger: Logger(level: .error, sink: { _ in }), clock: ManualClock(),
                                  threads: threads)
        var request = UploadRequest(url: "", method: .put, headers: [], body: RequestBody([]), connectTimeout: 5, stallTimeout: 10,
                                    timeout: 0, tls: profile.tls, proxy: nil)
        request.cancellation = cancellation
        let values = TemplateValues(path: RelativePath("a.bin"), id: "id-1", sha256: "", size: Int64(size), date: Date(),
                                    profile: "test", hostname: "h")
        return uploader.upload(source, resuming: resuming, values: values, request: request, transport: worker) { _ in }
    }
}
