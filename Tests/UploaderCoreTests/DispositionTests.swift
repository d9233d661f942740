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

@Suite("Disposition decides what happens to a file after an attempt")
struct DispositionTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func decide(_ status: Int, text: String = "", retryAfter: String? = nil, location: String? = nil) -> Disposition {
        Disposition.decide(.success(UploadResponse(status: status, statusText: text, location: location, retryAfter: retryAfter)), now: now)
    }

    @Test func anyTwoHundredIsSent() {
        for status in [200, 201, 204, 299] {
            guard case .sent(let response) = decide(status) else { Issue.record("\(status) not sent"); continue }
            #expect(response.status == status)
        }
    }

    @Test func requestTimeoutTooManyRequestsAndServerErrorsAreRetriedLater() {
        #expect(decide(408) == .retryLater(reason: "HTTP 408 Request Timeout", retryAfter: nil))
        #expect(decide(429, text: "Too Many Requests", retryAfter: "30") == .retryLater(reason: "HTTP 429 Too Many Requests", retryAfter: 30))
        #expect(decide(503, text: "Service Unavailable") == .retryLater(reason: "HTTP 503 Service Unavailable", retryAfter: nil))
        #expect(decide(599) == .retryLater(reason: "HTTP 599", retryAfter: nil))
    }

    @Test func unauthorizedAndForbiddenRefuseOurCredentialsNotTheFile() {
        #expect(decide(401, text: "Unauthorized") == .rejected(reason: "HTTP 401 Unauthorized"))
        #expect(decide(403, text: "Forbidden") == .rejected(reason: "HTTP 403 Forbidden"))
    }

    @Test func otherStatusesAndUnfollowedRedirectsArePermanent() {
        #expect(decide(400) == .permanent(reason: "HTTP 400 Bad Request"))
        #expect(decide(413) == .permanent(reason: "HTTP 413 Content Too Large"))
        #expect(decide(415) == .permanent(reason: "HTTP 415 Unsupported Media Type"))
        #expect(decide(422) == .permanent(reason: "HTTP 422 Unprocessable Content"))
        #expect(decide(301, location: "http://other/") == .permanent(reason: "HTTP 301 Moved Permanently (redirect to http://other/ not followed)"))
        #expect(decide(100) == .permanent(reason: "HTTP 100"))
    }

    @Test func serverReasonPhraseIsKeptAsSent() {
        #expect(decide(500, text: "Kaputt") == .retryLater(reason: "HTTP 500 Kaputt", retryAfter: nil))
    }

    @Test func transferFailuresMapByKind() {
        #expect(Disposition.decide(.failure(.unreachable("refused")), now: now) == .offline(reason: "refused"))
        #expect(Disposition.decide(.failure(.broken("reset", bytesSent: 5)), now: now) == .retryLater(reason: "reset", retryAfter: nil))
        #expect(Disposition.decide(.failure(.tls("bad cert")), now: now) == .permanent(reason: "bad cert"))
        #expect(Disposition.decide(.failure(.localRead("EIO")), now: now) == .permanent(reason: "EIO"))
        #expect(Disposition.decide(.failure(.other("malformed")), now: now) == .permanent(reason: "malformed"))
        #expect(Disposition.decide(.failure(.cancelled(bytesSent: 3, connected: true)), now: now) == .interrupted(connected: true))
        #expect(Disposition.decide(.failure(.cancelled(bytesSent: 0, connected: false)), now: now) == .interrupted(connected: false))
    }
}
