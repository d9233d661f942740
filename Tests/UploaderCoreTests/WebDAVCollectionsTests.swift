import Foundation
import Synchronization
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderTransfer

/// A WebDAV server as a table: each request's answer by method and path, in order received.
private final class DAVScript: Transport {
    struct Seen { var method: HTTPMethod; var path: String; var headers: [String: String]; var bodyLength: Int64 }
    /// Answers by "METHOD /path", each list used front to back (the last one repeats); default 201.
    private var answers: [String: [Result<UploadResponse, TransferFailure>]]
    private(set) var seen: [Seen] = []

    init(_ answers: [String: [Int]] = [:], failures: [String: TransferFailure] = [:]) {
        self.answers = answers.mapValues { $0.map { .success(UploadResponse(status: $0, bytesSent: 7)) } }
        for (key, failure) in failures { self.answers[key] = [.failure(failure)] }
    }

    func send(_ request: UploadRequest) -> Result<UploadResponse, TransferFailure> {
        let path = WebDAVCollections.split(request.url)!.path
        seen.append(Seen(method: request.method, path: path,
                         headers: Dictionary(request.headers.map { ($0.name.lowercased(), $0.value) }) { a, _ in a },
                         bodyLength: request.body.length))
        let key = "\(request.method.rawValue) \(path)"
        guard var list = answers[key], let answer = list.first else {
            return .success(UploadResponse(status: 201, bytesSent: request.body.length, effectiveURL: request.url))
        }
        if list.count > 1 { list.removeFirst(); answers[key] = list }
        guard case .success(var response) = answer else { return answer }
        response.effectiveURL = request.url
        return .success(response)
    }

    var trace: [String] { seen.map { "\($0.method.rawValue) \($0.path)" } }
}

@Suite("WebDAV collections made on a PUT's 409")
struct WebDAVCollectionsTests {
    private func setUp(_ url: String = "/dav/{date}/{path}", path: String = "a/b/f.txt",
                       known: KnownCollections = KnownCollections()) throws -> (WebDAVCollections, UploadRequest, TestFile) {
        var profile = try Fixture.profile(port: 8080, url: url)
        profile.auth = .bearer(token: Secret(value: "tok-1"))
        let file = try TestFile(Array("hello dav".utf8))
        let request = try Fixture.request(profile, file, path: RelativePath(path))
        return (try #require(WebDAVCollections(profile: profile, known: known)), request, file)
    }

    @Test func aConflictMakesEachMissingCollectionFromTheTopThenPutsAgainInOneExchange() throws {
        let (dav, request, file) = try setUp()
        let server = DAVScript(["PUT /dav/2026-01-01/a/b/f.txt": [409, 201], "MKCOL /dav/": [405]])
        let response = try dav.send(request, over: server).get()
        #expect(response.status == 201)
        #expect(server.trace == ["PUT /dav/2026-01-01/a/b/f.txt", "MKCOL /dav/", "MKCOL /dav/2026-01-01/",
                                 "MKCOL /dav/2026-01-01/a/", "MKCOL /dav/2026-01-01/a/b/", "PUT /dav/2026-01-01/a/b/f.txt"])
        #expect(server.seen.last?.bodyLength == file.size)
    }

    @Test func aSecondWorkerSharingTheMemoryMakesOnlyTheCollectionNotYetKnown() throws {
        let known = KnownCollections()
        let (first, request, _) = try setUp(known: known)
        _ = try first.send(request, over: DAVScript(["PUT /dav/2026-01-01/a/b/f.txt": [409, 201]])).get()
        #expect(known.count == 4)
        let (second, other, _) = try setUp(path: "a/c/g.txt", known: known)
        let server = DAVScript(["PUT /dav/2026-01-01/a/c/g.txt": [409, 201]])
        #expect(try second.send(other, over: server).get().status == 201)
        #expect(server.trace == ["PUT /dav/2026-01-01/a/c/g.txt", "MKCOL /dav/2026-01-01/a/c/", "PUT /dav/2026-01-01/a/c/g.txt"])
    }

    @Test func aPutIntoAnExistingCollectionSendsNoMkcol() throws {
        let (dav, request, _) = try setUp()
        let server = DAVScript()
        #expect(try dav.send(request, over: server).get().status == 201)
        #expect(server.trace == ["PUT /dav/2026-01-01/a/b/f.txt"])
    }

    /// Two workers make the same new collection at once: Apache's mkdir fails for the slower one,
    /// which it answers 403. Asked again, the collection is there (405), and the PUT goes in.
    @Test func aMkcolThatLosesTheRaceToAnotherWorkerIsAskedAgainAndFindsTheCollection() throws {
        let (dav, request, _) = try setUp()
        let server = DAVScript(["PUT /dav/2026-01-01/a/b/f.txt": [409, 201], "MKCOL /dav/2026-01-01/a/": [403, 405]])
        let response = try dav.send(request, over: server).get()
        #expect(response.status == 201)
        #expect(server.trace == ["PUT /dav/2026-01-01/a/b/f.txt", "MKCOL /dav/", "MKCOL /dav/2026-01-01/",
                                 "MKCOL /dav/2026-01-01/a/", "MKCOL /dav/2026-01-01/a/", "MKCOL /dav/2026-01-01/a/b/",
                                 "PUT /dav/2026-01-01/a/b/f.txt"])
    }

    @Test func aRefusedMkcolEndsTheAttemptWithItsStatusClassifiedAsThePutsWouldBe() throws {
        let (dav, request, _) = try setUp()
        let server = DAVScript(["PUT /dav/2026-01-01/a/b/f.txt": [409], "MKCOL /dav/2026-01-01/": [403]])
        let result = dav.send(request, over: server)
        let response = try result.get()
        #expect(response.status == 403)
        #expect(HTTPStatus.describe(response.status, text: response.statusText) == "HTTP 403 Forbidden (MKCOL /dav/2026-01-01/)")
        #expect(response.bytesSent == 7, "the attempt's bytes are the PUT's")
        #expect(server.trace == ["PUT /dav/2026-01-01/a/b/f.txt", "MKCOL /dav/", "MKCOL /dav/2026-01-01/", "MKCOL /dav/2026-01-01/"],
                "a refused MKCOL is asked once more before the attempt ends")
        guard case .rejected = Disposition.decide(result, now: Date()) else {
            Issue.record("403 on MKCOL is a refusal of our credentials, as on the PUT"); return
        }
        let gone = DAVScript(["PUT /dav/2026-01-01/a/b/f.txt": [409], "MKCOL /dav/2026-01-01/": [404]])
        guard case .permanent = Disposition.decide(dav.send(request, over: gone), now: Date()) else {
            Issue.record("404 on MKCOL is permanent"); return
        }

        let busy = DAVScript(["PUT /dav/2026-01-01/a/b/f.txt": [409], "MKCOL /dav/2026-01-01/a/": [503]])
        guard case .retryLater = Disposition.decide(dav.send(request, over: busy), now: Date()) else {
            Issue.record("503 on MKCOL is retryable"); return
        }
    }

    @Test func aRefusalWithinTheUrlsFixedPartIsPassedOver() throws {
        let (dav, request, _) = try setUp("/remote.php/dav/files/cam7/{date}/{name}", path: "f.txt")
        let server = DAVScript(["PUT /remote.php/dav/files/cam7/2026-01-01/f.txt": [409, 201],
                                "MKCOL /remote.php/": [404], "MKCOL /remote.php/dav/": [405],
                                "MKCOL /remote.php/dav/files/": [403], "MKCOL /remote.php/dav/files/cam7/": [405]])
        #expect(try dav.send(request, over: server).get().status == 201)
        #expect(server.trace.last == "PUT /remote.php/dav/files/cam7/2026-01-01/f.txt")
        #expect(server.trace.contains("MKCOL /remote.php/dav/files/cam7/2026-01-01/"))
    }

    @Test func mkcolCarriesTheCredentialsButNoBodyAndNoneOfItsHeaders() throws {
        let (dav, request, _) = try setUp()
        let server = DAVScript(["PUT /dav/2026-01-01/a/b/f.txt": [409, 201]])
        _ = try dav.send(request, over: server).get()
        let mkcol = try #require(server.seen.first { $0.method == .mkcol })
        #expect(mkcol.headers["authorization"] == "Bearer tok-1")
        #expect(mkcol.headers["user-agent"] == "uploader/\(UploaderVersion.string)")
        #expect(mkcol.headers["idempotency-key"] == nil)
        #expect(mkcol.headers["content-type"] == nil)
        #expect(mkcol.headers["content-digest"] == nil)
        #expect(mkcol.bodyLength == 0)
        let mkcolRequest = WebDAVCollections.mkcol("http://127.0.0.1:8080/dav/x/", like: request)
        #expect(mkcolRequest.tls == request.tls && mkcolRequest.proxy == request.proxy && mkcolRequest.connectTimeout == request.connectTimeout)
    }

    @Test func otherAnswersAndOtherMethodsAreLeftAlone() throws {
        let (dav, request, _) = try setUp()
        let server = DAVScript(["PUT /dav/2026-01-01/a/b/f.txt": [403]])
        #expect(try dav.send(request, over: server).get().status == 403)
        #expect(server.trace.count == 1)
        var post = try Fixture.profile(port: 8080, url: "/dav/{path}", method: .post)
        #expect(WebDAVCollections(profile: post, known: KnownCollections()) == nil)
        post.method = .put
        post.uploadProtocol = .tus
        #expect(WebDAVCollections(profile: post, known: KnownCollections()) == nil)
    }

    @Test func aCollectionRemovedOnTheServerIsMadeAgain() throws {
        let known = KnownCollections()
        let (dav, request, _) = try setUp(known: known)
        _ = try dav.send(request, over: DAVScript(["PUT /dav/2026-01-01/a/b/f.txt": [409, 201]])).get()
        let server = DAVScript(["PUT /dav/2026-01-01/a/b/f.txt": [409, 201], "MKCOL /dav/": [405], "MKCOL /dav/2026-01-01/": [405]])
        #expect(try dav.send(request, over: server).get().status == 201)
        #expect(server.trace.filter { $0.hasPrefix("MKCOL") }.count == 4)
    }

    @Test func aDestinationLostAfterTheFirstPutIsABrokenAttemptNotAnOutage() throws {
        let (dav, request, _) = try setUp()
        let server = DAVScript(["PUT /dav/2026-01-01/a/b/f.txt": [409]],
                               failures: ["MKCOL /dav/": .unreachable("Failed to connect")])
        guard case .failure(.broken) = dav.send(request, over: server) else { Issue.record("expected a broken exchange"); return }
    }
}
