import Foundation
import Testing
@testable import UploaderTransfer

@Suite("Retry-After is read as delay-seconds or an HTTP-date in each form RFC 9110 allows")
struct RetryAfterTests {
    /// Sun, 06 Nov 1994 08:49:37 GMT
    let date = Date(timeIntervalSince1970: 784_111_777)

    @Test func delaySecondsAreTakenAsIs() {
        #expect(RetryAfter.parse("120", now: date) == 120)
        #expect(RetryAfter.parse(" 0 ", now: date) == 0)
    }

    @Test func anIMFFixdateIsRelativeToNow() {
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: date.addingTimeInterval(-90)) == 90)
    }

    @Test func anRFC850DateIsRelativeToNow() {
        #expect(RetryAfter.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: date.addingTimeInterval(-90)) == 90)
    }

    @Test func anAsctimeDateIsRelativeToNow() {
        #expect(RetryAfter.parse("Sun Nov  6 08:49:37 1994", now: date.addingTimeInterval(-90)) == 90)
    }

    @Test func eachFormNamesTheSameInstant() {
        for text in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            #expect(RetryAfter.httpDate(text) == date, "\(text)")
        }
    }

    @Test func aDateInThePastMeansNow() {
        for text in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            #expect(RetryAfter.parse(text, now: date.addingTimeInterval(60)) == 0, "\(text)")
        }
    }

    @Test func garbageIsIgnored() {
        for text in ["", "soon", "-5", "1.5", "12:00", "Nov", "Sun, 06 Foo 1994 08:49:37 GMT", "next Tuesday",
                     String(repeating: "Nov 08:49:37 ", count: 10)] {
            #expect(RetryAfter.parse(text, now: date) == nil, "\(text)")
        }
    }
}
