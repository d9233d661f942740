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

/// `url = s3://…` and the `s3_*` keys: defaults, validation messages, redaction.
@Suite struct S3ConfigTests {
    static func section(_ lines: String) -> String {
        """
        [outbox cams]
        spool = /var/spool/uploader/cams
        url = s3://ingest/{hostname}/{date}/{path}
        access_key_id = AKIDEXAMPLE
        secret_access_key = ${S3_SECRET}
        \(lines)

        """
    }
    static let env = ["S3_SECRET": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"]

    func target(_ lines: String = "") throws -> S3Target {
        let config = try #require(ConfigFixture.config(Self.section(lines), env: Self.env))
        guard case .s3(let target) = config.profiles.first?.destination else { throw VectorError("not an s3 destination") }
        return target
    }

    @Test func anAWSProfileGetsVirtualHostedStyleAndTheDefaults() throws {
        let t = try target("s3_region = eu-central-1")
        #expect(t.bucket == "ingest" && t.key.source == "{hostname}/{date}/{path}")
        #expect(t.endpoint.description == "https://s3.eu-central-1.amazonaws.com" && !t.pathStyle)
        #expect(t.host == "ingest.s3.eu-central-1.amazonaws.com")
        #expect(t.multipartThreshold == 64 << 20 && t.partSize == 16 << 20 && t.partConcurrency == 4)
    }

    @Test func aCustomEndpointDefaultsToPathStyle() throws {
        let t = try target("s3_endpoint = http://127.0.0.1:9000")
        #expect(t.pathStyle && t.host == "127.0.0.1:9000" && t.region == "us-east-1")
        let values = TemplateValues(path: RelativePath("a b/ü.jpg"), id: "x", sha256: "", size: 1,
                                    date: Date(timeIntervalSince1970: 0), profile: "cams", hostname: "cam-7")
        #expect(t.url(path: t.objectPath(t.key(values)), query: "") == "http://127.0.0.1:9000/ingest/cam-7/1970-01-01/a%20b/%C3%BC.jpg")
    }

    @Test func thePartSizeIsRaisedSoNoFileNeedsMoreThanTenThousandParts() throws {
        let t = try target("part_size = 5MiB")
        #expect(t.partSize(forFileSize: 1 << 30) == 5 << 20)
        let huge: Int64 = 100 << 30
        let raised = t.partSize(forFileSize: huge)
        #expect(raised % (1 << 20) == 0 && (huge + raised - 1) / raised <= 10_000)
    }

    @Test func badS3SettingsAreReportedWithTheirLines() {
        let errors = ConfigFixture.errors(Self.section("""
            part_size = 1MiB
            part_concurrency = 0
            s3_endpoint = ftp://minio
            storage_class = cold storage
            method = POST
            token = abc
            """), env: Self.env)
        #expect(errors.contains { $0.hasSuffix(":6: part_size must be from 5MiB to 5GiB") }, "\(errors)")
        #expect(errors.contains { $0.contains(":7: invalid number \"0\" for part_concurrency") }, "\(errors)")
        #expect(errors.contains { $0.contains(":8: invalid s3_endpoint") }, "\(errors)")
        #expect(errors.contains { $0.contains(":9: invalid storage_class") }, "\(errors)")
        #expect(errors.contains { $0.contains(":10: method must be PUT") }, "\(errors)")
        #expect(errors.contains { $0.contains(":11: token is not used with s3:// urls") }, "\(errors)")
    }

    @Test func aBucketWithAPlaceholderOrNoKeyIsRefused() {
        let placeholder = ConfigFixture.errors("[outbox a]\nspool = /s\nurl = s3://{hostname}/x\naccess_key_id = A\nsecret_access_key = s\n")
        #expect(placeholder.contains { $0.contains("placeholders are only allowed in the key") }, "\(placeholder)")
        let noKey = ConfigFixture.errors("[outbox a]\nspool = /s\nurl = s3://bucket\naccess_key_id = A\nsecret_access_key = s\n")
        #expect(noKey.contains { $0.contains("needs a key after the bucket") }, "\(noKey)")
    }

    @Test func missingCredentialsAreReported() {
        let errors = ConfigFixture.errors("[outbox a]\nspool = /s\nurl = s3://bucket/{path}\n")
        #expect(errors.contains { $0.contains("missing required key \"access_key_id\"") }, "\(errors)")
        #expect(errors.contains { $0.contains("needs secret_access_key or secret_access_key_file") }, "\(errors)")
    }

    @Test func s3KeysWithAnHTTPURLAreReported() {
        let errors = ConfigFixture.errors(ConfigFixture.profile("s3_region = eu-west-1"))
        #expect(errors.contains { $0.hasSuffix(":4: s3_region is set but url is not s3://; it is only used with S3 destinations") }, "\(errors)")
    }

    @Test func checkConfigRedactsTheSecretAndTheLoggerScrubsIt() throws {
        let config = try #require(ConfigFixture.config(Self.section("session_token = ${TOKEN}"), env: Self.env.merging(["TOKEN": "tok-123"]) { $1 }))
        let text = effectiveConfigText(config)
        #expect(text.contains("secret_access_key = <redacted>") && text.contains("session_token = <redacted>"))
        #expect(!text.contains("wJalrXUtnFEMI") && !text.contains("tok-123"))
        #expect(text.contains("url = s3://ingest/{hostname}/{date}/{path}") && text.contains("multipart_threshold = 64MiB"))
        #expect(Set(config.secretValues).isSuperset(of: ["wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "tok-123"]))
        // What check-config prints reads back as the same configuration.
        let again = try #require(ConfigFixture.config(text.replacingOccurrences(of: "secret_access_key = <redacted>", with: "secret_access_key = x")
            .replacingOccurrences(of: "session_token = <redacted>", with: "session_token = y")))
        guard case .s3(let t) = again.profiles.first?.destination else { Issue.record("not s3"); return }
        #expect(t.bucket == "ingest" && !t.pathStyle)
        let keys = Set(text.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) })
        for key in S3Settings.keys where !["secret_access_key_file", "session_token_file"].contains(key) {
            #expect(keys.contains(key), "effective config lacks \(key)")
        }
    }

    @Test func theExampleConfigLoadsWithAPathStyleAndAVirtualHostedProfile() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var text = try String(contentsOf: root.appendingPathComponent("examples/s3/uploader.conf"), encoding: .utf8)
        let dir = try TemporaryDirectory()
        let secret = try dir.write("secret", "s3cr3t\n")
        text = text.replacingOccurrences(of: "/var/spool/uploader", with: dir.path + "/spool")
        for name in ["minio", "aws"] { text = text.replacingOccurrences(of: "/etc/uploader/\(name).secret", with: secret) }
        let config = try #require(ConfigFixture.config(text))
        let targets = config.profiles.compactMap { profile -> S3Target? in
            if case .s3(let target) = profile.destination { return target } else { return nil }
        }
        #expect(targets.count == 2)
        #expect(targets.first?.pathStyle == true && targets.first?.host == "127.0.0.1:9000")
        #expect(targets.last?.pathStyle == false && targets.last?.host == "example-fleet-logs.s3.eu-central-1.amazonaws.com")
    }
}
