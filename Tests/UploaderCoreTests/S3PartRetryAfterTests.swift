import Foundation
import Synchronization
import Testing
@testable import UploaderSupport
@testable import UploaderTransfer

/// A part answered "later" with a `Retry-After` sets when the file may come back, whatever else
/// ends the attempt (noJournal seed 602286 of the simulator: a stop that came while the other
/// parts drained dropped it, and so did a shorter `Retry-After` on another part).
@Suite struct S3PartRetryAfterTests {
    /// Creates the upload; answers every part 429 with `Retry-After: 35`, and the first of them
    /// comes with a stop (the attempt's cancel).
    final class TooManyRequests: Transport, Sendable {
        let stop: CancellationFlag
        init(stop: CancellationFlag) { self.stop = stop }
        func send(_ request: UploadRequest) -> Result<UploadResponse, TransferFailure> {
            if request.method == .post && request.url.contains("uploads") {
                return .success(UploadResponse(status: 200, body: "<InitiateMultipartUploadResult><UploadId>u1</UploadId></InitiateMultipartUploadResult>"))
            }
            if request.cancellation.isCancelled { return .failure(.cancelled(bytesSent: 0, connected: false)) }
            guard request.method == .put else { return .success(UploadResponse(status: 204)) }
            stop.cancel()
            return .success(UploadResponse(status: 429, retryAfter: "35"))
        }
    }

    @Test func aPartAnswered429ThenAStopEndsTheAttemptWithItsRetryAfter() throws {
        let stop = CancellationFlag()
        let store = TooManyRequests(stop: stop)
        let outcome = try S3Multipart.upload(S3Multipart.source([UInt8](repeating: 1, count: 1_500)), size: 1_500, worker: store,
                                             cancellation: stop) { store }
        guard case .retryLater(_, let retryAfter) = outcome.disposition else {
            Issue.record("the store asked to wait, the attempt says \(outcome.disposition)")
            return
        }
        #expect(retryAfter == 35)
    }

    @Test func ofTwoPartsAnsweredLaterTheLongerWaitIsTheAttempts() {
        let shorter = Disposition.retryLater(reason: "HTTP 429 Too Many Requests", retryAfter: 31)
        let longer = Disposition.retryLater(reason: "HTTP 429 Too Many Requests", retryAfter: 35)
        let none = Disposition.retryLater(reason: "HTTP 503 Service Unavailable", retryAfter: nil)
        #expect(S3MultipartUpload.outweighs(longer, shorter))
        #expect(!S3MultipartUpload.outweighs(shorter, longer))
        #expect(S3MultipartUpload.outweighs(shorter, none))
        #expect(!S3MultipartUpload.outweighs(none, shorter))
    }

    /// Another part finding the link gone does not drop the wait a part was answered with
    /// (noJournal seed 5299: the attempt ended offline and the file came back before it), nor does
    /// a part whose credentials were refused, before or after it (noJournal seed 2000693).
    @Test(arguments: [Disposition.offline(reason: "connect to destination: Connection refused"),
                      .rejected(reason: "HTTP 403 Forbidden")])
    func aPartOfflineOrRefusedBesideOneAnsweredLaterKeepsItsRetryAfter(_ other: Disposition) {
        let later = Disposition.retryLater(reason: "HTTP 429 Too Many Requests", retryAfter: 35)
        #expect(!S3MultipartUpload.outweighs(other, later))
        #expect(S3MultipartUpload.outweighs(later, other))
        #expect(S3MultipartUpload.outweighs(other, .retryLater(reason: "HTTP 503 Service Unavailable", retryAfter: nil)),
                "without a wait asked for, the link's loss or the refusal is what the attempt says")
        #expect(S3MultipartUpload.outweighs(.permanent(reason: "HTTP 400 Bad Request"), later), "a permanent failure still ends the file")
    }
}
