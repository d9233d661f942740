import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderTransfer

/// `RedirectFollowing`, over a scripted exchange: which redirects it sends again, to where, and when it stops.
@Suite("Redirect hops: followed within the host, at most five, never after a cancel")
struct RedirectFollowingTests {
    private func request(_ url: String, cancellation: CancellationFlag = CancellationFlag()) -> UploadRequest {
        UploadRequest(url: url, method: .put, headers: [], body: RequestBody([]), connectTimeout: 5, stallTimeout: 10,
                      timeout: 0, tls: TLSOptions(), proxy: nil, cancellation: cancellation)
    }

    private func answer(_ status: Int, to target: String? = nil) -> (result: Result<UploadResponse, TransferFailure>, redirectTo: String?) {
        (.success(UploadResponse(status: status, location: target, bytesSent: 0, effectiveURL: "")), target)
    }

    @Test func aRedirectWithinTheHostIsSentAgainWhereItPoints() throws {
        var asked: [String] = []
        let result = RedirectFollowing.send(request("http://127.0.0.1:8080/a")) { url in
            asked.append(url)
            return asked.count == 1 ? answer(307, to: "http://127.0.0.1:8080/b") : answer(201)
        }
        #expect(asked == ["http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b"])
        #expect(try result.get().status == 201)
    }

    @Test func aRedirectToAnotherHostComesBackAsTheAnswer() throws {
        var asked = 0
        let result = RedirectFollowing.send(request("http://127.0.0.1:8080/a")) { _ in
            asked += 1
            return answer(308, to: "http://127.0.0.2:8080/a")
        }
        #expect(asked == 1)
        #expect(try result.get().status == 308)
    }

    @Test func theSixthRedirectComesBackAsTheAnswer() throws {
        var asked = 0
        let result = RedirectFollowing.send(request("http://127.0.0.1:8080/a")) { _ in
            asked += 1
            return answer(302, to: "http://127.0.0.1:8080/\(asked)")
        }
        #expect(asked == RedirectFollowing.maxHops + 1)
        #expect(try result.get().status == 302)
    }

    @Test func aCancelBetweenHopsEndsTheRequestAsConnected() {
        let cancellation = CancellationFlag()
        var asked = 0
        let result = RedirectFollowing.send(request("http://127.0.0.1:8080/a", cancellation: cancellation)) { _ in
            asked += 1
            cancellation.cancel()
            return answer(307, to: "http://127.0.0.1:8080/b")
        }
        #expect(asked == 1)
        guard case .failure(.cancelled(let bytes, let connected)) = result else { Issue.record("\(result)"); return }
        #expect(bytes == 0 && connected)
    }

    /// The second hop cancelled before it connected: the first reached the destination, so the
    /// attempt is one the manifest counts (a request the server saw is never unrecorded).
    @Test func aHopCancelledBeforeItConnectsStillEndsTheRequestAsConnected() {
        var asked = 0
        let result = RedirectFollowing.send(request("http://127.0.0.1:8080/a")) { _ in
            asked += 1
            return asked == 1 ? answer(307, to: "http://127.0.0.1:8080/b") : (.failure(.cancelled(bytesSent: 0, connected: false)), nil)
        }
        #expect(asked == 2)
        guard case .failure(.cancelled(_, let connected)) = result else { Issue.record("\(result)"); return }
        #expect(connected)
    }
}
