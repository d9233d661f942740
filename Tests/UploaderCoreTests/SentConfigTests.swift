import Foundation
import Testing
@testable import UploaderConfig

/// `keep_sent_bytes` and `after_send`: parsed, validated with `PATH:LINE` errors, printed by check-config.
@Suite struct SentConfigTests {
    @Test func bothKeysParseAndCheckConfigPrintsThem() throws {
        let config = try #require(ConfigFixture.config(ConfigFixture.profile("keep_sent_bytes = 10GiB\nafter_send = delete")))
        let p = try #require(config.profiles.first)
        #expect(p.keepSentBytes == 10 << 30 && p.afterSend == .delete)
        let text = effectiveConfigText(config)
        #expect(text.contains("\nkeep_sent_bytes = 10GiB\n") && text.contains("\nafter_send = delete\n"), "\(text)")
    }

    @Test func theDefaultsKeepEverything() throws {
        let p = try #require(ConfigFixture.config(ConfigFixture.minimal)?.profiles.first)
        #expect(p.keepSentBytes == 0 && p.afterSend == .keep)
        let text = effectiveConfigText(try #require(ConfigFixture.config(ConfigFixture.minimal)))
        #expect(text.contains("\nkeep_sent_bytes = 0\n") && text.contains("\nafter_send = keep\n"))
    }

    @Test func badValuesAreErrorsWithTheirLine() {
        let path = ConfigFixture.path
        #expect(ConfigFixture.errors(ConfigFixture.profile("keep_sent_bytes = lots")) ==
            ["\(path):4: invalid size \"lots\" for keep_sent_bytes (use e.g. 512, 64KiB, 8MiB, 1GiB)"])
        #expect(ConfigFixture.errors(ConfigFixture.profile("after_send = move")) ==
            ["\(path):4: invalid value \"move\" for after_send (use keep or delete)"])
    }

    @Test func pruningWithDeleteIsAWarning() throws {
        let loaded = try ConfigFixture.parse(ConfigFixture.profile("after_send = delete\nkeep_sent_bytes = 1GiB")).get()
        #expect(loaded.warnings == ["\(ConfigFixture.path):5: warning: keep_sent_bytes has nothing to prune in [outbox photos]: "
                                    + "after_send = delete leaves nothing in sent/"])
    }
}
