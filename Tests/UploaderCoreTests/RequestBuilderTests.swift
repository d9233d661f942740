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

@Suite("RequestBuilder encodes files for the wire without a network")
struct RequestBuilderTests {
    @Test func rawRequestCarriesTheRenderedURLHeadersAndTheFileAsOneSegment() throws {
        let file = try TestFile(Array("hello".utf8))
        var profile = try Fixture.profile(port: 9, url: "/in/{profile}/{path}")
        profile.headers = [TemplatedField(name: "X-Host", value: try Template(parsing: "{hostname}\n")),
                           TemplatedField(name: "user-agent", value: try Template(parsing: "custom")),
                           TemplatedField(name: "Content-Length", value: try Template(parsing: "1"))]
        let request = try Fixture.request(profile, file, path: RelativePath("a dir/x?.txt"), contentType: "text/plain")
        #expect(request.url == "http://127.0.0.1:9/in/test/a%20dir/x%3F.txt")
        #expect(request.method == .put)
        #expect(request.headers.map(\.name) == ["Content-Type", "Idempotency-Key", "Content-Digest", "X-Host", "user-agent"])
        #expect(request.headers[0].value == "text/plain")
        #expect(request.headers[2].value == "sha-256=:\(Data(file.sha256).base64EncodedString()):")
        #expect(request.headers[3].value == "testhost")
        #expect(request.headers[4].value == "custom")
        #expect(request.body.length == 5)
        #expect(request.sourcePath == "a dir/x?.txt")
    }

    @Test func jsonRefusesFilesOverSixteenMebibytesWithAClearMessage() throws {
        let file = try TestFile([])
        let size = JSONBody.maxFileSize + 1
        let writable = open(file.path, O_WRONLY)
        defer { close(writable) }
        #expect(ftruncate(writable, off_t(size)) == 0)
        let profile = try Fixture.profile(port: 9, body: .json, method: .post)
        let source = Fixture.source(file, path: RelativePath("big.bin"), sha256: nil, size: size)
        #expect {
            _ = try RequestBuilder(profile: profile).request(
                for: source, values: Fixture.values(file, path: RelativePath("big.bin")), rateLimiter: nil, cancellation: CancellationFlag())
        } throws: { error in
            (error as? RequestBuildError)?.description == "body = json supports files up to 16 MiB; this file is 16777217 bytes"
        }
    }

    @Test func anUnreadableFileIsAReadError() throws {
        let file = try TestFile(Array("abc".utf8))
        let profile = try Fixture.profile(port: 9)
        let source = Fixture.source(file, path: RelativePath("gone.bin"), sha256: nil, fd: -1)
        #expect(throws: RequestBuildError.self) {
            _ = try RequestBuilder(profile: profile).request(
                for: source, values: Fixture.values(file, path: RelativePath("gone.bin")), rateLimiter: nil, cancellation: CancellationFlag())
        }
    }

    @Test func multipartBoundaryNeverOccursInFieldTextAndLengthIsExact() throws {
        let file = try TestFile(Array("0123456789".utf8))
        var candidates = ["AAA", "BBB"]
        let multipart = MultipartBody(fields: [(name: "note", value: "contains AAA")], fileField: "file",
                                      fileName: "n.txt", fileContentType: "text/plain", fd: file.fd, size: file.size,
                                      randomBoundary: { candidates.removeFirst() })
        #expect(multipart.boundary == "BBB")
        #expect(multipart.contentType == "multipart/form-data; boundary=BBB")
        let encoded = multipart.body.segments.flatMap { segment -> [UInt8] in
            switch segment {
            case .bytes(let b): return b
            case .file(_, _, let length): #expect(length == 10); return Array("0123456789".utf8)
            }
        }
        #expect(Int64(encoded.count) == multipart.body.length)
        let text = String(decoding: encoded, as: UTF8.self)
        #expect(text == "--BBB\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\ncontains AAA\r\n"
                + "--BBB\r\nContent-Disposition: form-data; name=\"file\"; filename=\"n.txt\"\r\nContent-Type: text/plain\r\n\r\n"
                + "0123456789\r\n--BBB--\r\n")
    }

    @Test func filenamesEscapeQuotesLineBreaksAndBackslashesButKeepUTF8() {
        #expect(MultipartBody.escape("a \"b\"\r\nc\\d é.txt") == "a %22b%22%0D%0Ac%5Cd é.txt")
    }

    @Test func multipartDigestCoversTheWholeEncodedBody() throws {
        let file = try TestFile(Array("payload".utf8))
        let profile = try Fixture.profile(port: 9, body: .multipart, method: .post)
        let request = try Fixture.request(profile, file)
        let digest = try BodyDigest.sha256(of: request.body, path: nil)
        #expect(request.headers.first { $0.name == "Content-Digest" }?.value == BodyDigest.header(sha256: digest))
        #expect(request.headers.first { $0.name == "Content-Type" }?.value.hasPrefix("multipart/form-data; boundary=----uploader-") == true)
    }
}
