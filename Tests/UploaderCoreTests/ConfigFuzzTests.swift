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

@Suite struct ConfigFuzzTests {
    /// SplitMix64: a tiny seeded generator, so a failure replays exactly.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let seedConfig = """
        [uploader]
        log_level = info ; comment
        metrics_file = m.prom
        [outbox photos]
        spool = /nonexistent-fuzz/photos
        url = "https://h.example:8443/p/{date}/{path}"
        auth = bearer
        token = ${TOKEN}
        header.Authorization = Bearer {id}
        form.a = "x ; \\" y"
        concurrency = 4
        connect_timeout = 10s
        max_rate = 10MiB
        recursive = yes
        ignore = *.tmp *~
        """

    static let fragments: [[UInt8]] = [
        "\"", "\\", "${", "}", "{", "[", "]", "=", "#", ";", " ", "\t", "\n", "\r", "\0", "${TOKEN}", "${NOPE}",
        "[outbox x]", "[uploader]", "url = ", "{path}", "{pth}", "token_file = /dev/zero", "spool = ",
        "s", "ms", "KiB", "99999999999999999999", ".", "..", "outbox", "\u{FEFF}", "é", "🙂",
    ].map { Array($0.utf8) } + [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80]]

    static func mutate(_ input: [UInt8], _ rng: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...8, using: &rng) {
            let at = bytes.isEmpty ? 0 : Int.random(in: 0...bytes.count, using: &rng)
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: bytes.insert(contentsOf: fragments.randomElement(using: &rng)!, at: at)
            case 1: if at < bytes.count { bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...12, using: &rng))) }
            case 2: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: at)
            case 3: if at < bytes.count { bytes[at] = UInt8.random(in: 0...255, using: &rng) }
            case 4:
                let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
                if let line = lines.randomElement(using: &rng) { bytes.insert(contentsOf: Array(line) + [10], at: at) }
            default: bytes.insert(contentsOf: [UInt8](repeating: UInt8(ascii: "a"), count: Int.random(in: 0...3000, using: &rng)), at: at)
            }
        }
        return bytes
    }

    @Test func randomAndMutatedConfigsYieldAConfigOrWellFormedErrors() throws {
        let path = "/nonexistent-fuzz/uploader.conf"
        let linePattern = try Regex("^/nonexistent-fuzz/uploader\\.conf(:[0-9]+)?: [^\\n]+$")
        var rng = SeededGenerator(state: 20_261_129)
        let seed = Array(Self.seedConfig.utf8)
        let started = Date()
        var successes = 0, failures = 0
        for round in 0..<3000 {
            let bytes: [UInt8]
            if round % 10 == 0 {
                bytes = (0..<Int.random(in: 0...400, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            } else {
                bytes = Self.mutate(seed, &rng)
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let parseStarted = Date()
            let outcome = ConfigLoader.parse(text: text, path: path, environment: ["TOKEN": "fuzz-secret-value"])
            #expect(Date().timeIntervalSince(parseStarted) < 2, "round \(round): one parse must never hang")
            switch outcome {
            case .success(let loaded):
                successes += 1
                #expect(!effectiveConfigText(loaded.configuration).contains("fuzz-secret-value"))
            case .failure(let errors):
                failures += 1
                #expect(!errors.errors.isEmpty)
                for error in errors.errors {
                    #expect(error.description.wholeMatch(of: linePattern) != nil, "round \(round): \(error.description)")
                    #expect(!error.description.contains("fuzz-secret-value"), "round \(round): the secret in an error")
                }
            }
            if Date().timeIntervalSince(started) > 8 { break }
        }
        #expect(successes > 0 && failures > 0)
    }

    @Test func pathologicalInputsEndQuickly() {
        let inputs = [
            String(repeating: "[", count: 100_000),
            "[outbox p]\nurl = " + String(repeating: "{", count: 50_000),
            "[outbox p]\nspool = /s\nurl = http://h/" + String(repeating: "{x", count: 50_000),
            "[outbox p]\nspool = /s\nurl = http://h/\nform.a = " + String(repeating: "{x", count: 50_000),
            String(repeating: "[outbox a]\n[outbox b]\n", count: 20_000),
            "[outbox p]\nform.a = " + String(repeating: "${", count: 50_000),
            "[outbox p]\nform.a = \"" + String(repeating: "\\", count: 50_001),
            "[outbox p]\n" + String(repeating: "k", count: 200_000) + " = 1",
            String(repeating: "\n", count: 100_000) + "[outbox p]\nspool = /s\nurl = http://h/\nconcurrency = \(String(repeating: "9", count: 10_000))",
        ]
        for text in inputs {
            if case .failure(let errors) = ConfigFixture.parse(text) {
                #expect(errors.errors.allSatisfy { $0.description.count < 1000 })
            }
        }
    }
}
