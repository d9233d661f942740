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

@Suite("The manifest round-trips and keeps the contract's shape")
struct ManifestTests {
    private func sample() -> Manifest {
        var m = Manifest(id: "b0a4c2de-0000-4000-8000-000000000001", profile: "photos", path: RelativePath("sub/report.pdf"),
                         size: 48213, mtime: "2026-11-29T11:32:00.123Z", sha256: String(repeating: "a", count: 64),
                         contentType: "application/pdf", state: .retry, createdAt: "2026-11-29T11:32:00.130Z")
        m.attempts = [Manifest.Attempt(startedAt: "2026-11-29T11:32:01.000Z", endedAt: "2026-11-29T11:32:02.000Z",
                                       bytesSent: 48213, httpStatus: 503, error: "HTTP 503 Service Unavailable", retryable: true)]
        m.nextAttemptAt = "2026-11-29T11:33:00.000Z"
        m.lastError = "HTTP 503 Service Unavailable"
        m.storedAs = "retry/sub/report.pdf"
        m.remote = Manifest.Remote(url: "https://x/sub/report.pdf", httpStatus: 503, response: "busy")
        return m
    }

    @Test func encodingThenDecodingGivesTheSameManifest() throws {
        let m = sample()
        #expect(try Manifest.decode(Data(m.encodedLine())) == m)
    }

    @Test func nullFieldsAreWrittenNotOmitted() throws {
        var m = sample()
        m.nextAttemptAt = nil
        m.remote = nil
        let object = try #require(try JSONSerialization.jsonObject(with: Data(m.encodedLine())) as? [String: Any])
        for key in ["next_attempt_at", "remote", "sent_at", "stored_as", "last_error", "sha256"] {
            #expect(object.keys.contains(key), "\(key) present")
        }
        #expect(object["next_attempt_at"] is NSNull)
        #expect(object["version"] as? Int == 1)
        #expect(object["size"] as? Int == 48213)
        #expect(object["path_base64"] == nil, "only for names that are not UTF-8")
    }

    @Test func aNameThatIsNotUTF8KeepsItsExactBytesInPathBase64() throws {
        let bytes: [UInt8] = [0x61, 0xFF, 0x62]
        let m = Manifest(id: "x", profile: "p", path: RelativePath(bytes: bytes), size: 0, mtime: "", sha256: nil,
                         contentType: "application/octet-stream", state: .queued, createdAt: "")
        #expect(m.path == "a\u{FFFD}b")
        #expect(m.pathBase64.flatMap { Data(base64Encoded: $0) } == Data(bytes))
    }

    @Test func interruptedAttemptsAndOnesBeforeAnOperatorRetryDoNotCount() {
        var m = sample()
        m.attempts.append(Manifest.Attempt(startedAt: "t", endedAt: "t", interrupted: true))
        m.attempts.append(Manifest.Attempt(startedAt: "t", endedAt: "t", httpStatus: 500, retryable: true))
        #expect(m.countedAttempts == 2)
        m.attemptsBeforeRetry = 2
        #expect(m.countedAttempts == 1)
    }

    @Test func timestampsAreRFC3339UTCWithMilliseconds() throws {
        let date = Date(timeIntervalSince1970: 1_795_951_920.123)
        let text = Timestamp.format(date)
        #expect(text == "2026-11-29T11:32:00.123Z")
        let parsed = try #require(Timestamp.parse(text))
        #expect(abs(parsed.timeIntervalSince(date)) < 0.001)
        #expect(Timestamp.parse("yesterday") == nil)
    }
}

@Suite("Content types come from mime.types by extension, case-insensitive")
struct MimeTypesTests {
    let table = MimeTypes(parsing: """
        # comment
        application/pdf\t\t\tpdf
        image/jpeg\t\t\t\tjpeg jpg jpe
        text/plain\t\t\t\ttxt text # trailing comment
        """)

    @Test func knownExtensionsMapToTheirType() {
        #expect(table.contentType(forName: "report.pdf") == "application/pdf")
        #expect(table.contentType(forName: "IMG_0001.JPG") == "image/jpeg")
        #expect(table.contentType(forName: "a.tar.txt") == "text/plain")
    }

    @Test func unknownOrMissingExtensionsAreOctetStream() {
        #expect(table.contentType(forName: "archive.xyz") == "application/octet-stream")
        #expect(table.contentType(forName: "README") == "application/octet-stream")
        #expect(table.contentType(forName: ".bashrc") == "application/octet-stream")
    }

    @Test func theSystemTableIsDebiansMediaTypes() {
        let system = MimeTypes.load()
        #expect(system.contentType(forName: "x.pdf") == "application/pdf", "/etc/mime.types from the media-types package")
        #expect(system.contentType(forName: "x.PNG") == "image/png")
    }

    /// Windows line ends, upper-case extensions and a later line naming the same extension.
    @Test func crlfLinesCaseAndTheFirstTypeWins() {
        let table = MimeTypes(parsing: "text/csv csv CSVX\r\ntext/x-other csv\r\n#image/png png\r\n")
        #expect(table.contentType(forName: "a.csv") == "text/csv")
        #expect(table.contentType(forName: "a.csvx") == "text/csv")
        #expect(table.contentType(forName: "a.png") == "application/octet-stream")
    }
}

@Suite("Names in sent/ and retry/ never overwrite")
struct SpoolNamesTests {
    @Test func aNumberGoesBeforeTheLastExtension() {
        #expect(Spool.numbered(RelativePath("report.pdf"), 2) == RelativePath("report.2.pdf"))
        #expect(Spool.numbered(RelativePath("a.tar.gz"), 2) == RelativePath("a.tar.2.gz"))
        #expect(Spool.numbered(RelativePath("README"), 3) == RelativePath("README.3"))
        #expect(Spool.numbered(RelativePath("dir/x.txt"), 2) == RelativePath("dir/x.2.txt"))
    }

    @Test func manifestNamesPairWithTheirFiles() {
        let name = Spool.manifestName(for: RelativePath("a.txt"))
        #expect(name == RelativePath("a.txt.manifest.json"))
        #expect(Spool.isManifestName(name))
        #expect(!Spool.isManifestName(RelativePath(".manifest.json")), "a bare suffix names no file")
        #expect(Spool.fileName(forManifest: name) == RelativePath("a.txt"))
    }

    @Test func aSidecarThatWouldExceed255BytesIsRefused() {
        #expect(!Spool.sidecarTooLong(RelativePath(String(repeating: "a", count: 241))))
        #expect(Spool.sidecarTooLong(RelativePath(String(repeating: "a", count: 242))))
    }
}

@Suite("Log numbers are formatted without String(format:)")
struct FixedPointTests {
    @Test func decimalsArePaddedAndRounded() {
        #expect(LogNumbers.fixed(0.0015, places: 3) == "0.002")
        #expect(LogNumbers.fixed(12.5, places: 1) == "12.5")
        #expect(LogNumbers.fixed(3.04, places: 3) == "3.040")
        #expect(LogNumbers.fixed(7, places: 0) == "7")
        #expect(LogNumbers.rate(3 << 20, 1) == "3.0MiB/s")
        #expect(LogNumbers.rate(512, 1) == "0.5KiB/s")
    }
}
