import Foundation
import Synchronization
import Testing
@testable import UploaderSupport
@testable import UploaderValues
@testable import UploaderTransfer

/// A multipart upload a record keeps only to be aborted (its file was claimed afresh since: the
/// content changed) is never resumed, even when the file has the size and mtime it began with
/// again: a power cut can bring those back while the parts the store holds came from another
/// version, and resuming would assemble an object of both (noJournal seed 19002320 of the
/// simulator: the content the producer made durable was nowhere once the file had been deleted
/// after its upload). It is aborted, and a new upload sends every part.
@Suite struct S3AbandonedUploadTests {
    /// An S3 store that answers every request and logs them: method and query.
    final class Store: Transport, Sendable {
        let log = Mutex<[String]>([])
        func send(_ request: UploadRequest) -> Result<UploadResponse, TransferFailure> {
            let query = request.url.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            log.withLock { $0.append("\(request.method.rawValue) \(query)") }
            switch request.method {
            case .post where query == "uploads":
                return .success(UploadResponse(status: 200, body: "<InitiateMultipartUploadResult><UploadId>new</UploadId></InitiateMultipartUploadResult>"))
            case .post:
                return .success(UploadResponse(status: 200, body: "<CompleteMultipartUploadResult><ETag>\"all\"</ETag></CompleteMultipartUploadResult>"))
            case .get:
                return .success(UploadResponse(status: 200, body: "<ListPartsResult><Part><PartNumber>1</PartNumber><ETag>\"p1\"</ETag><Size>1000</Size></Part><IsTruncated>false</IsTruncated></ListPartsResult>"))
            case .put:
                return .success(UploadResponse(status: 200, etag: "\"part\""))
            default:
                return .success(UploadResponse(status: 204))
            }
        }
    }

    static func run(abandoned: Bool) throws -> (log: [String], outcome: UploadOutcome) {
        let source = S3Multipart.source([UInt8](repeating: 7, count: 1_500))
        var kept = S3UploadState(uploadID: "old", bucket: "b", key: "a.bin", partSize: 1_000, fileSize: 1_500,
                                 fileMtime: source.status.mtimeText, parts: [.init(number: 1, etag: "\"p1\"")])
        if abandoned { kept.abandoned = true }
        let store = Store()
        let outcome = try S3Multipart.upload(source, size: 1_500, worker: store, resuming: kept) { store }
        return (store.log.withLock { $0 }, outcome)
    }

    @Test func anUploadKeptOnlyToBeAbortedIsAbortedAndANewOneSendsEveryPart() throws {
        let (log, outcome) = try Self.run(abandoned: true)
        guard case .sent = outcome.disposition else { Issue.record("\(outcome.disposition)"); return }
        #expect(!log.contains { $0.hasPrefix("GET ") }, "the old upload's parts were listed to be kept: \(log)")
        #expect(log.contains("DELETE uploadId=old"), "\(log)")
        #expect(log.contains("POST uploads"), "\(log)")
        #expect(log.filter { $0.hasPrefix("PUT ") && $0.contains("uploadId=new") }.count == 2, "\(log)")
    }

    /// The same record without the mark: the upload the file began is resumed (its part 1 kept).
    @Test func anUploadBegunForTheFileAsItIsIsResumed() throws {
        let (log, outcome) = try Self.run(abandoned: false)
        guard case .sent = outcome.disposition else { Issue.record("\(outcome.disposition)"); return }
        #expect(log.contains { $0.hasPrefix("GET ") && $0.contains("uploadId=old") }, "\(log)")
        #expect(log.filter { $0.hasPrefix("PUT ") }.count == 1, "\(log)")
    }
}
