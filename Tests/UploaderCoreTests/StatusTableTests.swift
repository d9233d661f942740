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

/// Plain `status` and `status --json`, rendered from a census and a daemon state built by hand.
@Suite struct StatusTableTests {
    static let now = Date(timeIntervalSince1970: 1_795_956_679)

    static func report(_ edit: (inout SpoolCensus) -> Void = { _ in }, daemon: DaemonState? = nil) throws -> StatusReport {
        let profile = Profile(name: "photos", spool: SpoolPaths(root: "/var/spool/uploader/photos"),
                              destination: .http(URLTemplate(try Template(parsing: "http://127.0.0.1:1/{path}"))))
        var census = SpoolCensus()
        edit(&census)
        return StatusReport(profile: profile, census: census, daemon: daemon)
    }

    @Test func oneFileIsSingularAndOtherCountsArePlural() throws {
        let text = StatusTable.text([try Self.report { c in
            c.uploading = SpoolCensus.Tally(files: 1, bytes: 2048)
            c.retry = SpoolCensus.Tally(files: 2, bytes: 20)
        }], now: Self.now)
        #expect(text.contains("  uploading   1 file, 2.0 KiB\n"), "\(text)")
        #expect(text.contains("  retry       2 files, 20 B\n"), "\(text)")
        #expect(text.contains("  queued      0 files, 0 B\n"), "\(text)")
        #expect(ByteCount.files(0) == "0 files" && ByteCount.files(1) == "1 file" && ByteCount.files(7) == "7 files")
    }

    @Test func nothingQueuedSaysNothingOfTheOldest() throws {
        let text = StatusTable.text([try Self.report { c in
            c.uploading = SpoolCensus.Tally(files: 1, bytes: 10)
            c.oldestQueued = Self.now.addingTimeInterval(-19)
        }], now: Self.now)
        #expect(!text.contains("oldest"), "\(text)")
        let waiting = StatusTable.text([try Self.report { c in
            c.queued = SpoolCensus.Tally(files: 3, bytes: 9120)
            c.oldestQueued = Self.now.addingTimeInterval(-19)
        }], now: Self.now)
        #expect(waiting.contains("  queued      3 files, 8.9 KiB, oldest 19s\n"), "\(waiting)")
    }

    @Test func refusedCountsFilesAndBytesLikeEveryOtherCount() throws {
        let report = try Self.report { c in c.refused = SpoolCensus.Tally(files: 2, bytes: 300) }
        let json = try #require(try JSONSerialization.jsonObject(with: Data(StatusJSON.text([report], now: Self.now).utf8)) as? [String: Any])
        let photos = (json["profiles"] as? [String: Any])?["photos"] as? [String: Any]
        let refused = photos?["refused"] as? [String: Any]
        #expect(refused?["files"] as? Int == 2 && refused?["bytes"] as? Int == 300, "\(String(describing: photos))")
        #expect(StatusTable.text([report], now: Self.now).contains("  refused     2 files: not regular files"))
    }
}
