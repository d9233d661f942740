import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// The response header lines the transport reads without String work, and what it makes of them.
@Suite struct CurlHeaderFilterTests {
    private func interesting(_ line: String) -> Bool {
        Array(line.utf8).withUnsafeBytes { ResponseHead.isInteresting($0) }
    }

    @Test func statusLinesAndKeptHeadersPassInAnyCase() {
        for line in ["HTTP/1.1 201 Created\r\n", "HTTP/2 503\r\n", "ETag: \"abc\"\r\n", "etag:x\r\n",
                     "Location: /a\r\n", "RETRY-AFTER: 5\r\n", "retry-after: 5\r\n"] {
            #expect(interesting(line), "\(line)")
        }
    }

    @Test func aLaterStatusLineStartsAfreshAndKeptHeadersAreKeptByName() {
        var head = ResponseHead(keeping: ["Upload-Offset"])
        for line in ["HTTP/1.1 100 Continue\r\n", "Retry-After: 9\r\n", "HTTP/1.1 429 Too Many Requests\r\n",
                     "retry-after:  30 \r\n", "Upload-Offset: 12\r\n", "Server: x\r\n", "ETag: \"e\"\r\n"] {
            Array(line.utf8).withUnsafeBytes { _ = head.take($0) }
        }
        let response = head.response(status: 429, body: "", bytesSent: 3, effectiveURL: "u")
        #expect(response.statusText == "Too Many Requests" && response.retryAfter == "30" && response.etag == "\"e\"")
        #expect(response.headers == ["upload-offset": "12"])
    }

    @Test func otherHeadersAndShortLinesAreSkipped() {
        for line in ["Server: nginx\r\n", "Content-Length: 0\r\n", "Date: x\r\n", "\r\n", "ET", "Etags: x\r\n", "X-ETag: y\r\n"] {
            #expect(!interesting(line), "\(line)")
        }
    }
}
