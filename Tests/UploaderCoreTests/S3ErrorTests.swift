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

/// S3's XML answers: errors become dispositions with a message saying what to check.
@Suite struct S3ErrorTests {
    static func body(_ code: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <Error><Code>\(code)</Code><Message>Something about \(code)</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>
        """
    }

    @Test(arguments: [("AccessDenied", 403), ("InvalidAccessKeyId", 403), ("SignatureDoesNotMatch", 403), ("ExpiredToken", 400)])
    func refusedCredentialsHoldTheFileAndSayWhatToCheck(_ code: String, _ status: Int) throws {
        let response = UploadResponse(status: status, body: Self.body(code))
        guard case .rejected(let reason) = try #require(S3Error.disposition(for: response, now: Date())) else {
            Issue.record("\(code) is not a refusal of our credentials"); return
        }
        #expect(reason.hasPrefix("S3 \(code) (HTTP \(status))") && reason.contains("4442587FB7D0A2F9")
                    && (reason.contains("check") || reason.contains("refresh")), "\(reason)")
    }

    @Test func aMissingBucketIsPermanentAndSaysWhatToCheck() throws {
        let response = UploadResponse(status: 404, body: Self.body("NoSuchBucket"))
        guard case .permanent(let reason) = try #require(S3Error.disposition(for: response, now: Date())) else {
            Issue.record("NoSuchBucket is not permanent"); return
        }
        #expect(reason.hasPrefix("S3 NoSuchBucket (HTTP 404)") && reason.contains("check the bucket name"), "\(reason)")
    }

    @Test func aSkewedClockIsRetriedThoughItComesWith403() throws {
        let response = UploadResponse(status: 403, body: Self.body("RequestTimeTooSkewed"))
        guard case .retryLater = try #require(S3Error.disposition(for: response, now: Date())) else {
            Issue.record("RequestTimeTooSkewed is not retried"); return
        }
    }

    @Test(arguments: [("SlowDown", 503), ("RequestTimeout", 400), ("InternalError", 500)])
    func throttlingAndTimeoutsAreRetried(_ code: String, _ status: Int) throws {
        let response = UploadResponse(status: status, body: Self.body(code))
        guard case .retryLater(let reason, _) = try #require(S3Error.disposition(for: response, now: Date())) else {
            Issue.record("\(code) is not retried"); return
        }
        #expect(reason.contains(code))
    }

    @Test func anErrorInsideA200CompleteAnswerIsNoSuccess() {
        let response = UploadResponse(status: 200, body: Self.body("InternalError"))
        #expect(S3Error.disposition(for: response, now: Date()) != nil)
        #expect(S3Error.disposition(for: UploadResponse(status: 200, body: "<CompleteMultipartUploadResult/>"), now: Date()) == nil)
    }

    @Test func listPartsAnswersAreReadPartByPart() throws {
        let xml = try #require(S3XML("""
            <ListPartsResult><UploadId>u1</UploadId><IsTruncated>true</IsTruncated><NextPartNumberMarker>2</NextPartNumberMarker>
            <Part><PartNumber>1</PartNumber><ETag>"a"</ETag><Size>5242880</Size></Part>
            <Part><PartNumber>2</PartNumber><ETag>&quot;b&quot;</ETag><Size>10</Size></Part></ListPartsResult>
            """))
        #expect(xml.root == "ListPartsResult" && xml.first("UploadId") == "u1" && xml.first("NextPartNumberMarker") == "2")
        let parts = xml.records("Part")
        #expect(parts.count == 2 && parts[0]["ETag"] == "\"a\"" && parts[1]["ETag"] == "\"b\"" && parts[1]["Size"] == "10")
    }

    @Test func aManifestKeepsItsS3RecordThroughJSON() throws {
        var manifest = Manifest(id: "i", profile: "p", path: RelativePath("a"), size: 1, mtime: "m", sha256: nil,
                                contentType: "t", state: .uploading, createdAt: "c")
        #expect(!String(decoding: try Data(manifest.encodedLine()), as: UTF8.self).contains("\"s3\""), "no s3 key for plain uploads")
        manifest.s3 = S3UploadState(uploadID: "u", bucket: "b", key: "k/a", partSize: 5 << 20, fileSize: 1, fileMtime: "m",
                                    parts: [.init(number: 1, etag: "\"e\"")])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(manifest.encodedLine())) as? [String: Any])
        let s3 = try #require(json["s3"] as? [String: Any])
        #expect(s3["upload_id"] as? String == "u" && s3["part_size"] as? Int == 5 << 20 && (s3["parts"] as? [Any])?.count == 1)
        #expect(try Manifest.decode(Data(manifest.encodedLine())) == manifest)
    }

    @Test func aPartRecordedTwiceIsKeptOnceInOrder() {
        var state = S3UploadState(uploadID: "u", bucket: "b", key: "k/a", partSize: 5 << 20, fileSize: 11 << 20,
                                  fileMtime: "2026-01-01T00:00:00.000Z")
        state.record(.init(number: 3, etag: "\"c\""))
        state.record(.init(number: 1, etag: "\"a\""))
        state.record(.init(number: 3, etag: "\"c2\""))
        #expect(state.parts.map(\.number) == [1, 3] && state.parts.map(\.etag) == ["\"a\"", "\"c2\""])
    }
}
