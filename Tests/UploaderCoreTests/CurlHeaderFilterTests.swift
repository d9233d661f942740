import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

@Suite struct CurlHeaderFilterTests {
    private func interesting(_ line: String) -> Bool {
        Array(line.utf8).withUnsafeBytes { CurlTransferContext.isInteresting($0) }
    }

    @Test func statusLinesAndKeptHeadersPassInAnyCase() {
        for line in ["HTTP/1.1 201 Created\r\n", "HTTP/2 503\r\n", "ETag: \"abc\"\r\n", "etag:x\r\n",
                     "Location: /a\r\n", "RETRY-AFTER: 5\r\n", "retry-after: 5\r\n"] {
            #expect(interesting(line), "\(line)")
        }
    }

    @Test func otherHeadersAndShortLinesAreSkipped() {
        for line in ["Server: nginx\r\n", "Content-Length: 0\r\n", "Date: x\r\n", "\r\n", "ET", "Etags: x\r\n", "X-ETag: y\r\n"] {
            #expect(!interesting(line), "\(line)")
        }
    }
}
