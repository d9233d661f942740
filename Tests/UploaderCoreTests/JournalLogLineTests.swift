@preconcurrency import Glibc
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

/// Issue #25: with stderr going to the journal, each line starts with its syslog priority and
/// carries no timestamp (journald stamps it); otherwise lines look as they always did.
@Suite struct JournalLogLineTests {
    private let clock = ManualClock(start: Date(timeIntervalSince1970: 1_795_956_679.343))

    private func lines(_ destination: LogDestination, _ format: LogFormat) -> [String] {
        let box = LinesBox()
        let logger = Logger(level: .debug, format: format, destination: destination, clock: clock, sink: { box.append($0) })
        logger.error("cannot move file to sent/", ["file": "a.txt"])
        logger.warn("will retry", ["http.status": "503"])
        logger.info("sent", ["file": "b c.txt"])
        logger.debug("claimed")
        return box.all
    }

    @Test func textLinesForTheJournalStartWithTheirPriorityAndHaveNoTime() {
        #expect(lines(.journal, .text) == [
            "<3>ERROR cannot move file to sent/ file=a.txt",
            "<4>WARN will retry http.status=503",
            "<6>INFO sent file=\"b c.txt\"",
            "<7>DEBUG claimed",
        ])
    }

    @Test func jsonLinesForTheJournalAreThePriorityThenTheObjectWithoutTime() {
        #expect(lines(.journal, .json) == [
            #"<3>{"level":"error","msg":"cannot move file to sent/","file":"a.txt"}"#,
            #"<4>{"level":"warn","msg":"will retry","http.status":"503"}"#,
            #"<6>{"level":"info","msg":"sent","file":"b c.txt"}"#,
            #"<7>{"level":"debug","msg":"claimed"}"#,
        ])
    }

    @Test func linesForAStreamKeepTheirTimestamp() {
        #expect(lines(.stream, .text).first == "2026-11-29T12:51:19.343Z ERROR cannot move file to sent/ file=a.txt")
        #expect(lines(.stream, .json).first
            == #"{"time":"2026-11-29T12:51:19.343Z","level":"error","msg":"cannot move file to sent/","file":"a.txt"}"#)
    }

    @Test func plainLinesGetOnlyThePriorityAndLoseTheirSecrets() {
        let box = LinesBox()
        let logger = Logger(level: .error, destination: .journal, clock: clock, sink: { box.append($0) })
        logger.configure(level: .error, format: .text, secrets: ["s3cret"])
        logger.plain(.error, "/etc/uploader/uploader.conf:4: bad value s3cret")
        logger.plain(.warn, "/etc/uploader/uploader.conf:9: warning: unused")
        Logger(destination: .stream, sink: { box.append($0) }).plain(.error, "uploader: no profile")
        #expect(box.all == ["<3>/etc/uploader/uploader.conf:4: bad value <redacted>",
                            "<4>/etc/uploader/uploader.conf:9: warning: unused",
                            "uploader: no profile"])
    }

    @Test func journalStreamCountsOnlyWhenItNamesThisVeryFile() {
        #expect(LogDestination.matching(journalStream: "64769:1234567", device: 64769, inode: 1_234_567) == .journal)
        #expect(LogDestination.matching(journalStream: "64769:1234568", device: 64769, inode: 1_234_567) == .stream)
        #expect(LogDestination.matching(journalStream: "64770:1234567", device: 64769, inode: 1_234_567) == .stream)
        for malformed in ["", ":", "64769", "64769:", ":1234567", "64769:1234567:1", " 64769:1234567", "0x10:1234567"] {
            #expect(LogDestination.matching(journalStream: malformed, device: 64769, inode: 1_234_567) == .stream, "\(malformed)")
        }
        #expect(LogDestination.matching(journalStream: nil, device: 64769, inode: 1_234_567) == .stream)
    }

    @Test func standardErrorIsTheJournalWhenJournalStreamNamesFileDescriptorTwo() throws {
        var info = stat()
        try #require(fstat(2, &info) == 0)
        let device = UInt64(info.st_dev), inode = UInt64(info.st_ino)
        #expect(LogDestination.ofStandardError(environment: ["JOURNAL_STREAM": "\(device):\(inode)"]) == .journal)
        #expect(LogDestination.ofStandardError(environment: ["JOURNAL_STREAM": "\(device):\(inode + 1)"]) == .stream)
        #expect(LogDestination.ofStandardError(environment: [:]) == .stream)
    }
}
