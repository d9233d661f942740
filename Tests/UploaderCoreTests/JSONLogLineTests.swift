import Foundation
import Testing
@testable import UploaderSupport

/// `log_format = json`: numbers are JSON numbers under their documented names, everything else a
/// string, and lines that are no log event (start-up failures) are objects too.
@Suite struct JSONLogLineTests {
    private let clock = ManualClock(start: Date(timeIntervalSince1970: 1_795_956_679.343))

    private func logger(_ box: LinesBox) -> Logger {
        Logger(level: .debug, format: .json, destination: .journal, clock: clock, sink: { box.append($0) })
    }

    @Test func numericFieldsAreJSONNumbersAndOthersStayStrings() {
        let box = LinesBox()
        logger(box).info("sent", ["file": "42", "bytes": "48213", "duration_s": "0.123", "http_status": "201", "rate": "1.2MiB/s"])
        #expect(box.all == [#"<6>{"level":"info","msg":"sent","file":"42","bytes":48213,"duration_s":0.123,"http_status":201,"rate":"1.2MiB/s"}"#])
    }

    @Test func aNumericFieldWhoseValueIsNoNumberStaysAValidString() {
        let box = LinesBox()
        logger(box).warn("odd", ["bytes": "12 MiB", "size": "007", "percent": "1.", "attempts": "-3"])
        #expect(box.all == [#"<4>{"level":"warn","msg":"odd","bytes":"12 MiB","size":"007","percent":"1.","attempts":-3}"#])
    }

    @Test func aPlainLineIsAnObjectWithTimeLevelAndMessage() {
        let box = LinesBox()
        let stream = Logger(format: .json, destination: .stream, clock: clock, sink: { box.append($0) })
        stream.plain(.error, "uploader: profile p: \"held\"")
        logger(box).plain(.warn, "uploader.conf:3: warning: x")
        #expect(box.all == [#"{"time":"2026-11-29T12:51:19.343Z","level":"error","msg":"uploader: profile p: \"held\""}"#,
                            #"<4>{"level":"warn","msg":"uploader.conf:3: warning: x"}"#])
    }
}
