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

@Suite struct TimestampTests {
    @Test func formatsUTCWithMilliseconds() {
        #expect(Timestamp.format(Date(timeIntervalSince1970: 1_795_956_679.343)) == "2026-11-29T12:51:19.343Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: 951_782_400.007)) == "2000-02-29T00:00:00.007Z")
    }

    @Test func datesBefore1970KeepAPositiveMillisecondPart() {
        #expect(Timestamp.format(Date(timeIntervalSince1970: -1.5)) == "1969-12-31T23:59:58.500Z")
    }

    @Test func formatAndParseRoundTrip() throws {
        for seconds in [0.0, 1.001, 86_399.999, 1_795_956_679.343, 4_102_444_800.5] {
            let text = Timestamp.format(Date(timeIntervalSince1970: seconds))
            let back = try #require(Timestamp.parse(text))
            #expect(abs(back.timeIntervalSince1970 - seconds) < 0.001, "\(text)")
        }
    }
}
