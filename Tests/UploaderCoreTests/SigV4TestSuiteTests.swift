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

/// AWS's published SigV4 test suite (Fixtures/aws-sig-v4-test-suite, Apache-2.0): for every case
/// that applies to S3, our canonical request, string to sign and Authorization header must match.
@Suite struct SigV4TestSuiteTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/aws-sig-v4-test-suite").path

    /// Cases that do not apply to S3, and why. The generic suite normalises URI paths (collapses
    /// `//`, `.` and `..`); S3 never does (an object may be named `a//b/../c`), so these expect
    /// a canonical path that S3 (and our signer) must not produce.
    static let skipped: [String: String] = [
        "normalize-path/get-relative": "expects `/example/..` normalised to `/`; S3 keeps paths as sent",
        "normalize-path/get-relative-relative": "expects `..` segments removed; S3 keeps paths as sent",
        "normalize-path/get-slash": "expects `//` collapsed; S3 keeps paths as sent",
        "normalize-path/get-slash-dot-slash": "expects `/./` collapsed; S3 keeps paths as sent",
        "normalize-path/get-slash-pointless-dot": "expects `/./example` collapsed; S3 keeps paths as sent",
        "normalize-path/get-slashes": "expects `//example//` collapsed; S3 keeps paths as sent",
    ]

    static let selfInconsistent: Set<String> = ["post-x-www-form-urlencoded", "post-x-www-form-urlencoded-parameters"]

    static let signer = SigV4Signer(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                    region: "us-east-1", service: "service")

    /// Every case folder (one holding `NAME.req`), as a path relative to the suite.
    static func cases() throws -> [String] {
        let root = URL(fileURLWithPath: directory)
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
        var found: [String] = []
        while let entry = walker.nextObject() as? String {
            if entry.hasSuffix(".req") { found.append((entry as NSString).deletingLastPathComponent) }
        }
        return found.sorted()
    }

    @Test func theSuiteIsThereWithItsLicenseAndNotice() throws {
        for name in ["LICENSE", "NOTICE"] {
            #expect(FileManager.default.fileExists(atPath: Self.directory + "/" + name), "\(name) must travel with the vectors")
        }
        let all = try Self.cases()
        #expect(all.count == 31)
        #expect(Set(Self.skipped.keys).isSubset(of: Set(all)), "a skipped case no longer exists")
    }

    @Test(arguments: try SigV4TestSuiteTests.cases().filter { SigV4TestSuiteTests.skipped[$0] == nil })
    func everyApplicableVectorSignsLikeAWS(_ path: String) throws {
        let name = (path as NSString).lastPathComponent
        func read(_ ext: String) throws -> String {
            try String(contentsOfFile: "\(Self.directory)/\(path)/\(name).\(ext)", encoding: .utf8)
        }
        let request = try VectorRequest(parsing: try read("req"))
        let signed = request.signerRequest
        let (canonical, _) = Self.signer.canonicalRequest(signed)
        #expect(canonical == (try read("creq")), "canonical request of \(path)")
        let amzDate = try #require(request.headers.first { $0.name.lowercased() == "x-amz-date" }?.value)
        // Two cases disagree with themselves (a known flaw of the published suite): their .creq
        // signs content-length, but their .sts and .authz were made from another canonical request
        // (without content-length; for -parameters also with `charset=utf8`). Only .creq is checked there.
        guard !Self.selfInconsistent.contains(path) else { return }
        #expect(Self.signer.stringToSign(canonicalRequest: canonical, amzDate: amzDate) == (try read("sts")), "string to sign of \(path)")
        #expect(Self.signer.authorization(for: signed, amzDate: amzDate) == (try read("authz")), "Authorization of \(path)")
    }

    @Test func theSigningKeyMatchesAWSsDocumentedExample() {
        // From AWS's "Examples of how to derive a signing key for Signature Version 4" (iam, us-east-1).
        let signer = SigV4Signer(accessKeyID: "x", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                 region: "us-east-1", service: "iam")
        #expect(signer.signingKey(day: "20150830").hexString == "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9")
    }
}

/// One `.req` file of the suite: request line, headers (continuation lines start with blanks), body.
struct VectorRequest {
    var method: String
    var path: String
    var query: [(name: String, value: String)]
    var headers: [(name: String, value: String)]
    var body: String

    init(parsing text: String) throws {
        let (head, body) = text.range(of: "\n\n").map { (String(text[..<$0.lowerBound]), String(text[$0.upperBound...])) } ?? (text, "")
        var lines = head.components(separatedBy: "\n")
        let requestLine = lines.removeFirst()
        let first = requestLine.firstIndex(of: " ")!, last = requestLine.range(of: " HTTP/", options: .backwards)!.lowerBound
        method = String(requestLine[..<first])
        let target = String(requestLine[requestLine.index(after: first)..<last])
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = String(parts[0])
        query = parts.count > 1 ? parts[1].split(separator: "&").map { pair in
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(kv[0]), kv.count > 1 ? String(kv[1]) : "")
        } : []
        headers = []
        for line in lines {
            if line.first == " " || line.first == "\t", let lastHeader = headers.popLast() {
                // A folded line is one more value of the same header (the suite expects `v1,v2,v3`).
                headers.append(lastHeader)
                headers.append((lastHeader.name, line.trimmingCharacters(in: .whitespaces)))
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { throw VectorError("bad header line \(line)") }
            headers.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
        }
        self.body = body
    }

    var signerRequest: SigV4Signer.Request {
        SigV4Signer.Request(method: method, path: S3URIEncoding.encode(Array(path.utf8), keepSlash: true), query: query,
                            headers: headers, payloadHash: SHA256.hash(Array(body.utf8)).hexString)
    }
}

struct VectorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

