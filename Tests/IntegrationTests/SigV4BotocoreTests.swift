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

/// Our SigV4 signatures for our own S3 requests must equal those botocore (PyPI, AWS's own
/// Python signer) computes for the same method, URL, headers and time.
@Suite struct SigV4BotocoreTests {
    static func target(pathStyle: Bool, token: String?) throws -> S3Target {
        let endpoint = pathStyle ? try #require(S3Endpoint(parsing: "http://127.0.0.1:9000")) : S3Target.awsEndpoint(region: "eu-west-1")
        var target = S3Target(bucket: "ingest", key: try Template(parsing: "cams/{hostname}/{date}/{path}"), endpoint: endpoint,
                              endpointGiven: pathStyle, region: pathStyle ? "us-east-1" : "eu-west-1", pathStyle: pathStyle,
                              accessKeyID: "AKIDEXAMPLE", secretAccessKey: Secret(value: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
                              sessionToken: token.map { Secret(value: $0) })
        target.storageClass = "STANDARD_IA"
        return target
    }

    static func requests(_ target: S3Target) -> [(String, UploadRequest)] {
        let requests = S3Requests(profile: Profile(name: "p", spool: SpoolPaths(root: "/tmp/x"), destination: .s3(target)), target: target, clock: SystemClock())
        let key = Array("cams/host-1/2026-11-29/a dir/ünïcödé + (1).jpg".utf8)
        let context = S3Requests.Context(key: key, contentType: "image/jpeg", extraHeaders: [("x-amz-meta-site", "north  pole")],
                                         rateLimiter: nil, cancellation: CancellationFlag(), sourcePath: nil)
        let body = RequestBody([.bytes(Array("hello".utf8))])
        let sha = SHA256.hash(Array("hello".utf8))
        return [
            ("PutObject", requests.putObject(context, body: body, sha256: sha)),
            ("PutObject unsigned payload", requests.putObject(context, body: body, sha256: nil)),
            ("CreateMultipartUpload", requests.createMultipartUpload(context)),
            ("UploadPart", requests.uploadPart(context, uploadID: "up/+id=", number: 7, body: body, sha256: sha)),
            ("ListParts", requests.listParts(context, uploadID: "up/+id=", marker: 200)),
            ("CompleteMultipartUpload", requests.completeMultipartUpload(context, uploadID: "up/+id=",
                                                                         parts: [.init(number: 1, etag: "\"abc\"")])),
            ("AbortMultipartUpload", requests.abortMultipartUpload(context, uploadID: "up/+id=")),
        ]
    }

    @Test(arguments: [(true, nil), (false, "FQoGZXIvYXdzEXAMPLE//token+/=")] as [(Bool, String?)])
    func ourSignaturesEqualBotocoresForEveryRequestWeSend(pathStyle: Bool, token: String?) throws {
        let target = try Self.target(pathStyle: pathStyle, token: token)
        for (name, request) in Self.requests(target) {
            let ours = try #require(request.headers.first { $0.name == "Authorization" }?.value)
            let amzDate = try #require(request.headers.first { $0.name == "x-amz-date" }?.value)
            var headers: [String: String] = [:]
            for header in request.headers where header.name != "Authorization" { headers[header.name] = header.value }
            var spec: [String: Any] = ["method": request.method.rawValue, "url": request.url, "headers": headers,
                                       "access_key_id": target.accessKeyID, "secret_access_key": target.secretAccessKey.value,
                                       "region": target.region, "amz_date": amzDate]
            if let token { spec["session_token"] = token }
            let result = try ProcessRunner.run([try TestPython.path(), try PackagePaths.fixture("s3_tool.py"), "sign"],
                                               stdin: try JSONSerialization.data(withJSONObject: spec), timeout: 60)
            try #require(result.exitCode == 0, "botocore is needed (scripts/install-deps.sh installs it): \(result)")
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: String])
            #expect(answer["authorization"] == ours, "\(name) (\(pathStyle ? "path style" : "virtual-hosted")); botocore's canonical request:\n\(answer["canonical_request"] ?? "")")
        }
    }
}
