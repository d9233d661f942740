import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

@Suite("Redirects are followed only to the same scheme and host:port")
struct RedirectPolicyTests {
    @Test func sameOriginIsFollowed() {
        #expect(RedirectPolicy.mayFollow(from: "http://127.0.0.1:8080/a", to: "http://127.0.0.1:8080/b?x=1"))
        #expect(RedirectPolicy.mayFollow(from: "https://Example.org/a", to: "https://example.org:443/b"))
    }

    @Test func anotherHostPortOrSchemeIsNot() {
        #expect(!RedirectPolicy.mayFollow(from: "http://127.0.0.1:8080/a", to: "http://localhost:8080/a"))
        #expect(!RedirectPolicy.mayFollow(from: "http://127.0.0.1:8080/a", to: "http://127.0.0.1:8081/a"))
        #expect(!RedirectPolicy.mayFollow(from: "https://example.org/a", to: "http://example.org/a"))
        #expect(!RedirectPolicy.mayFollow(from: "http://example.org/a", to: "ftp://example.org/a"))
        #expect(!RedirectPolicy.mayFollow(from: "http://example.org/a", to: "not a url"))
    }
}
