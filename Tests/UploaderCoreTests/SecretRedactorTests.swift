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

@Suite("SecretRedactor keeps echoed credentials out of what the server's answer leaves behind")
struct SecretRedactorTests {
    @Test func everyTextOfAnAnswerIsRedactedAndTheRestKept() {
        let redactor = SecretRedactor(secrets: ["tok", "tok-long"])
        let response = UploadResponse(status: 401, statusText: "Bad tok", etag: "\"tok\"", location: "/x/tok-long",
                                      retryAfter: nil, body: "key tok-long is not tok", bytesSent: 3,
                                      effectiveURL: "http://h/tok")
        guard case .success(let out) = redactor.redact(.success(response)) else { Issue.record("not a success"); return }
        #expect(out.statusText == "Bad <redacted>")
        #expect(out.etag == "\"<redacted>\"")
        #expect(out.location == "/x/<redacted>", "the longest secret is replaced whole")
        #expect(out.body == "key <redacted> is not <redacted>")
        #expect(out.effectiveURL == "http://h/<redacted>")
        #expect(out.status == 401 && out.bytesSent == 3)
    }

    @Test func failureMessagesAreRedactedToo() {
        let redactor = SecretRedactor(secrets: ["pw"])
        #expect(redactor.redact(.failure(.other("bad pw"))) == .failure(.other("bad <redacted>")))
        #expect(redactor.redact(.failure(.broken("pw!", bytesSent: 9))) == .failure(.broken("<redacted>!", bytesSent: 9)))
    }

    @Test func basicAuthAlsoCountsItsBase64CredentialsAsSecret() {
        let auth = Auth.basic(username: "u", password: Secret(value: "p"))
        #expect(auth.secrets == ["p", Data("u:p".utf8).base64EncodedString()])
    }
}
