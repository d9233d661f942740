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

@Suite("URLTemplate keeps every file name inside its URL prefix")
struct URLTemplateTests {
    private func render(_ template: String, _ path: RelativePath, profile: String = "photos") throws -> String {
        let values = TemplateValues(path: path, id: "id-1", sha256: "ab", size: 7,
                                    date: Date(timeIntervalSince1970: 1_800_000_000), profile: profile, hostname: "host 1")
        return URLTemplate(try Template(parsing: template)).render(values)
    }

    @Test(arguments: [
        ("..", "%2E%2E"), (".", "%2E"), ("..x", "..x"), ("...", "..."),
        ("a b", "a%20b"), ("%2F", "%252F"), ("?q", "%3Fq"), ("#frag", "%23frag"),
        ("line\nbreak", "line%0Abreak"), ("cr\rlf", "cr%0Dlf"), ("ünï.txt", "%C3%BCn%C3%AF.txt"),
        ("a+b=c&d", "a%2Bb%3Dc%26d"), ("@host:80", "%40host%3A80"), ("~-_.", "~-_."),
    ])
    func eachHostileNameIsOneInertSegmentUnderThePrefix(name: String, encoded: String) throws {
        let url = try render("https://up.example.com/in/{name}", RelativePath(name))
        #expect(url == "https://up.example.com/in/" + encoded)
        let parsed = try #require(URLComponents(string: url))
        #expect(parsed.host == "up.example.com")
        #expect(parsed.query == nil && parsed.fragment == nil)
        #expect(parsed.percentEncodedPath.hasPrefix("/in/"))
        #expect(!parsed.percentEncodedPath.dropFirst(4).contains("/"))
    }

    @Test func pathKeepsItsOwnSlashesAndEncodesEachSubdirectory() throws {
        #expect(try render("http://127.0.0.1:8080/u/{path}", RelativePath("a b/../?c/#d/x y.txt"))
                == "http://127.0.0.1:8080/u/a%20b/%2E%2E/%3Fc/%23d/x%20y.txt")
        #expect(try render("http://127.0.0.1:8080/u/{path}", RelativePath("2026/11/report.pdf"))
                == "http://127.0.0.1:8080/u/2026/11/report.pdf")
    }

    @Test func nameIsOnlyTheLastComponentOfASubdirectoryPath() throws {
        #expect(try render("http://h/u/{name}", RelativePath("deep/dir/last file")) == "http://h/u/last%20file")
    }

    @Test func bytesThatAreNotUTF8AreEncodedOneByOne() throws {
        let path = RelativePath(bytes: [0x61, 0xFF, 0xFE, 0x2F, 0x80])
        #expect(try render("http://h/{path}", path) == "http://h/a%FF%FE/%80")
        #expect(try render("http://h/{name}", path) == "http://h/%80")
    }

    @Test func otherPlaceholdersAreEncodedAndLiteralsKeptAsWritten() throws {
        #expect(try render("http://h/{profile}/{date}/{hostname}/{size}-{id}.{sha256}?k={name}", RelativePath("a&b"),
                           profile: "p q")
                == "http://h/p%20q/2027-01-15/host%201/7-id-1.ab?k=a%26b")
    }

    @Test func aPlaceholderValueCannotInjectAnotherPlaceholder() throws {
        #expect(try render("http://h/{name}", RelativePath("{path}")) == "http://h/%7Bpath%7D")
    }

    @Test func doubledBracesAreLiteralBraces() throws {
        #expect(try render("http://h/{{x}}/{name}", RelativePath("n")) == "http://h/{x}/n")
    }

    @Test(arguments: ["{nmae}", "{Name}", "{}", "{path }", "{hostname}{file}"])
    func anUnknownPlaceholderIsRejected(text: String) {
        #expect(throws: Template.UnknownPlaceholder.self) { _ = try Template(parsing: "http://h/" + text) }
    }
}
