import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderSpool

@Suite struct JSONTextTests {
    /// Whatever the text, the quoted form parses back to it with Foundation's JSON reader.
    @Test func quotedTextParsesBackToItself() throws {
        let texts = ["plain", "", "a \"quoted\" word", "back\\slash", "line\nbreak\r\ttab", "\u{0}\u{1}\u{1F}\u{7F}",
                     "naïve café 😀", "mixed \u{7}bell and ü", String(repeating: "x", count: 5_000)]
        for text in texts {
            let quoted = JSONText.quote(text)
            let back = try JSONDecoder().decode(String.self, from: Data(quoted.utf8))
            #expect(back == text, "\(quoted)")
        }
    }

    @Test func controlCharactersAreEscapedAsTheySpell() {
        #expect(JSONText.quote("a\u{1}b\u{7F}") == "\"a\\u0001b\\u007f\"")
        #expect(JSONText.quote("\u{1F}") == "\"\\u001f\"")
        #expect(JSONText.quote("q\"\\\n") == "\"q\\\"\\\\\\n\"")
    }

    @Test func decimalsMatchSwiftsOwn() {
        for value: Int64 in [0, 7, -7, 10, 99, 100, 4_096, -1_000_000, Int64.max, Int64.min] {
            var bytes: [UInt8] = []
            JSONText.appendDecimal(value, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == String(value))
        }
        var bytes: [UInt8] = []
        JSONText.appendDecimal(UInt64.max, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == String(UInt64.max))
    }

    /// A manifest with hostile strings in every text field reads back equal, newline-terminated.
    @Test func manifestWithHostileTextsRoundTrips() throws {
        var manifest = Manifest(id: "id-\u{1}", profile: "p\"rofile", path: RelativePath("dir/ünï\ncode \\ name.bin"), size: 4_096,
                                mtime: "2026-11-30T00:00:00.000Z", sha256: nil, contentType: "text/plain; charset=\"x\"",
                                state: .queued, createdAt: "2026-11-30T00:00:00.000Z")
        manifest.lastError = "HTTP 500: \u{7F}\t\"boom\""
        let line = try manifest.encodedLine()
        #expect(line.last == UInt8(ascii: "\n"))
        let back = try Manifest.decode(Data(line))
        #expect(back.path == manifest.path)
        #expect(back.profile == manifest.profile)
        #expect(back.lastError == manifest.lastError)
        #expect(back.contentType == manifest.contentType)
        #expect(back.id == manifest.id)
    }
}
