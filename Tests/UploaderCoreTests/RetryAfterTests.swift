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

@Suite("Retry-After is read as delta-seconds or an HTTP date")
struct RetryAfterTests {
    /// Sun, 06 Nov 1994 08:49:37 GMT
    let date = Date(timeIntervalSince1970: 784_111_777)

    @Test func deltaSecondsAreTakenAsIs() {
        #expect(RetryAfter.parse("120", now: date) == 120)
        #expect(RetryAfter.parse(" 0 ", now: date) == 0)
    }

    @Test func anIMFFixdateIsRelativeToNow() {
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: date.addingTimeInterval(-90)) == 90)
    }

    @Test func aDateInThePastMeansNow() {
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: date.addingTimeInterval(60)) == 0)
    }

    @Test func garbageAndOtherDateFormsAreIgnored() {
        for text in ["", "soon", "-5", "1.5", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
                     "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT"] {
            #expect(RetryAfter.parse(text, now: date) == nil, "\(text)")
        }
    }
}
