import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderTransfer

/// A stop that cuts a multipart upload short: the attempt counts as made once the store has
/// answered one of its requests, whichever request the cut falls on (journalled seed 700105 of the
/// simulator: a stop before the complete left the attempt unrecorded, its create on the server).
@Suite struct S3CancelledAttemptTests {
    /// The worker's transport: the store's answers, until the request `cutAt` picks, which meets
    /// the cancel before it connects (as libcurl reports a transfer cancelled before it began).
    final class CutTransport: Transport, Sendable {
        let store: S3PartThreadSeamTests.Store
        let cancellation: CancellationFlag
        let cutAt: @Sendable (UploadRequest) -> Bool
        init(store: S3PartThreadSeamTests.Store, cancellation: CancellationFlag, cutAt: @escaping @Sendable (UploadRequest) -> Bool) {
            self.store = store
            self.cancellation = cancellation
            self.cutAt = cutAt
        }
        func send(_ request: UploadRequest) -> Result<UploadResponse, TransferFailure> {
            guard cutAt(request) else { return store.send(request) }
            cancellation.cancel()
            return .failure(.cancelled(bytesSent: 0, connected: false))
        }
    }

    static func upload(cutAt: @escaping @Sendable (UploadRequest) -> Bool) throws -> (UploadOutcome, S3PartThreadSeamTests.Store) {
        let content = [UInt8](repeating: 7, count: 1_500)
        let source = S3Multipart.source(content)
        let store = S3PartThreadSeamTests.Store()
        let cancellation = CancellationFlag()
        let outcome = try S3Multipart.upload(source, size: content.count, worker: CutTransport(store: store, cancellation: cancellation, cutAt: cutAt),
                                             cancellation: cancellation) {
            S3PartThreadSeamTests.PartReader(store: store, source: source)
        }
        return (outcome, store)
    }

    @Test func aStopThatCutsTheCompleteEndsAnAttemptThatReachedTheStore() throws {
        let (outcome, store) = try Self.upload { $0.method == .post && $0.url.contains("uploadId=") }
        #expect(store.got.withLock { $0.count } == 3, "created, and both parts stored")
        guard case .interrupted(let connected) = outcome.disposition else {
            Issue.record("\(outcome.disposition)")
            return
        }
        #expect(connected, "the store has this upload and its parts: the attempt was made")
    }

    @Test func aStopThatCutsTheCreateEndsAnAttemptThatNeverReachedTheStore() throws {
        let (outcome, store) = try Self.upload { $0.method == .post && $0.url.contains("uploads") }
        #expect(store.got.withLock { $0.isEmpty })
        guard case .interrupted(let connected) = outcome.disposition else {
            Issue.record("\(outcome.disposition)")
            return
        }
        #expect(!connected, "nothing reached the store")
    }
}
