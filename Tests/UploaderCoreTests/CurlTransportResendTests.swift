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

/// libcurl re-sends a request by itself when a reused keep-alive connection dies before an
/// answer; the destination then sees more requests than the manifest records as attempts.
/// One `send` must put at most one request on the wire.
@Suite("CurlTransport never re-sends a request by itself")
struct CurlTransportResendTests {
    /// Two sends on one transport: the first answered (so the connection is kept alive and
    /// reused), the second read whole by the server and then closed without an answer.
    private func secondSendOnADyingConnection(bodyBytes: Int) throws -> (result: Result<UploadResponse, TransferFailure>,
                                                                          recorded: [FaultServer.Recorded]) {
        let server = try FaultServer()
        try server.script([["status": 200], ["close_without_answer": true]])
        let file = try TestFile(TestFile.pattern(bodyBytes))
        let request = try Fixture.request(try Fixture.profile(port: server.port), file)
        let transport = CurlTransport()
        _ = try transport.send(request).get()
        let result = transport.send(request)
        return (result, try server.requests())
    }

    @Test func aReusedConnectionClosedWithoutAnAnswerIsBrokenAndTheBodyIsNotSentAgain() throws {
        let (result, recorded) = try secondSendOnADyingConnection(bodyBytes: 200_000)
        #expect(recorded.count == 2, "one request per send, got \(recorded.map(\.client_port))")
        #expect(recorded.count == 2 && recorded[0].client_port == recorded[1].client_port, "the second send reused the connection")
        guard case .failure(.broken(_, let bytesSent)) = result else { Issue.record("expected .broken, got \(result)"); return }
        #expect(bytesSent == 200_000)
        #expect(Disposition.decide(result, now: Date()).isRetryLater)
    }

    @Test func anEmptyBodyIsNotSentAgainEither() throws {
        let (result, recorded) = try secondSendOnADyingConnection(bodyBytes: 0)
        #expect(recorded.count == 2, "one request per send, got \(recorded.count)")
        guard case .failure(.broken) = result else { Issue.record("expected .broken, got \(result)"); return }
        #expect(Disposition.decide(result, now: Date()).isRetryLater)
    }

    @Test func keepAliveIsStillReusedForNormalTraffic() throws {
        let server = try FaultServer()
        let file = try TestFile(TestFile.pattern(10_000))
        let request = try Fixture.request(try Fixture.profile(port: server.port), file)
        let transport = CurlTransport()
        for _ in 0..<3 { #expect(try transport.send(request).get().status == 200) }
        let ports = Set(try server.requests().map(\.client_port))
        #expect(ports.count == 1)
    }
}
