@preconcurrency import Glibc
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

@Suite("CurlTransport verifies TLS and reports local read failures")
struct CurlTransportTLSTests {
    private func httpsRequest(_ server: FaultServer, _ file: TestFile, tls: TLSOptions) throws -> UploadRequest {
        var request = try Fixture.request(try Fixture.profile(port: server.port), file)
        request.url = server.base + "/secure"
        request.tls = tls
        return request
    }

    @Test func anUntrustedCertificateIsATLSFailureThatIsPermanent() throws {
        let server = try FaultServer(tls: true)
        let file = try TestFile(Array("secret".utf8))
        let result = CurlTransport().send(try httpsRequest(server, file, tls: TLSOptions()))
        guard case .failure(.tls(let message)) = result else { Issue.record("expected .tls, got \(result)"); return }
        #expect(message.hasPrefix("TLS certificate verification failed: "))
        guard case .permanent = Disposition.decide(result, now: Date()) else { Issue.record("not permanent"); return }
    }

    @Test func theConfiguredCAFileMakesTheCertificateTrusted() throws {
        let server = try FaultServer(tls: true)
        let file = try TestFile(Array("secret".utf8))
        var tls = TLSOptions()
        tls.caFile = FaultServer.testCertificate
        #expect(try CurlTransport().send(try httpsRequest(server, file, tls: tls)).get().status == 200)
    }

    @Test func insecureSkipVerifyAcceptsAnyCertificate() throws {
        let server = try FaultServer(tls: true)
        let file = try TestFile(Array("secret".utf8))
        var tls = TLSOptions()
        tls.insecureSkipVerify = true
        #expect(try CurlTransport().send(try httpsRequest(server, file, tls: tls)).get().status == 200)
    }

    @Test func aFileThatShrinksUnderTheUploadIsALocalReadFailure() throws {
        let server = try FaultServer()
        let file = try TestFile(TestFile.pattern(512 * 1024), name: "shrinking.bin")
        let request = try Fixture.request(try Fixture.profile(port: server.port), file, path: RelativePath("shrinking.bin"))
        #expect(truncate(file.path, 1000) == 0)
        let result = CurlTransport().send(request)
        guard case .failure(.localRead(let message)) = result else { Issue.record("expected .localRead, got \(result)"); return }
        #expect(message.contains("shrinking.bin"))
    }
}
