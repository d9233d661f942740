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
        return StatusReport(profile: profile, census: census, presence: daemon.map { .running($0) } ?? .none, unreadable: [])
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

    static func daemon(paused: PauseReason? = nil, _ files: [InFlightFile] = []) -> DaemonState {
        DaemonState(pid: 4242, reachable: paused != .offline, lastError: nil, refused: 0, updatedAt: "2026-11-29T12:51:19.000Z",
                    pausedReason: paused, inFlight: files)
    }

    static func file(_ path: String, _ size: Int64, sent: Int64, rate: Int64, eta: Int?) -> InFlightFile {
        InFlightFile(path: path, size: size, bytesSent: sent, rateBytesPerSecond: rate, etaSeconds: eta,
                     startedAt: "2026-11-29T12:51:00.000Z")
    }

    @Test func eachUploadInFlightGetsOneLineOfAtMost80Columns() throws {
        let files = [
            Self.file("holiday-video.mp4", 20 << 20, sent: 2_621_440, rate: 512 << 10, eta: 36),
            Self.file("report.pdf", 48213, sent: 48213, rate: 1 << 20, eta: 0),
            Self.file("cameras/north-gate/2026-11-29/IMG_20261129_125119_0001_burst_sequence.jpg", 3 << 30, sent: 0, rate: 0, eta: nil),
        ]
        let text = StatusTable.text([try Self.report({ c in c.uploading = SpoolCensus.Tally(files: 3, bytes: 3 << 30) },
                                                     daemon: Self.daemon(files))], now: Self.now)
        let lines = text.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("  uploading") })
        let flying = Array(lines[(start + 1)...(start + 3)])
        #expect(flying[0].hasPrefix("    holiday-video.mp4 "), "\(text)")
        #expect(flying[0].contains("  12%  ") && flying[0].contains("2.5 MiB of 20.0 MiB") && flying[0].contains("512.0 KiB/s")
                && flying[0].hasSuffix("ETA 36s"), "\(flying[0])")
        #expect(flying[1].contains("100%") && flying[1].contains("47.1 KiB of 47.1 KiB") && flying[1].hasSuffix("ETA 0s"))
        #expect(flying[2].contains("0%") && flying[2].contains("0 B of 3.0 GiB") && flying[2].contains("0 B/s")
                && flying[2].hasSuffix("ETA --"), "\(flying[2])")
        #expect(flying[2].contains("…") && flying[2].hasPrefix("    cameras/") && flying[2].contains(".jpg "), "\(flying[2])")
        for line in lines { #expect(line.count <= 80, "\(line.count) columns: \(line)") }
        // The columns line up: every percent ends in the same column.
        let percentEnds = flying.map { line in line.distance(from: line.startIndex, to: line.range(of: "%")!.upperBound) }
        #expect(Set(percentEnds).count == 1, "\(flying)")
    }

    @Test func aNameWithANewlineCannotBreakTheTable() {
        let lines = InFlightLines.lines([Self.file("evil\nname.bin", 10, sent: 5, rate: 1, eta: 5)])
        #expect(lines.count == 1 && lines[0].contains("evil?name.bin"))
    }

    @Test func shorteningKeepsTheStartAndTheEnd() {
        #expect(InFlightLines.shortened("abcdefghij", to: 10) == "abcdefghij")
        #expect(InFlightLines.shortened("abcdefghijk", to: 7) == "abc…ijk")
        #expect(InFlightLines.shortened("abcdefghijk", to: 8) == "abcd…ijk")
    }

    @Test func aPausedProfileSaysWhy() throws {
        let text = StatusTable.text([try Self.report(daemon: Self.daemon(paused: .offline))], now: Self.now)
        #expect(text.contains("\n  paused      offline: the destination cannot be reached"), "\(text)")
        let running = StatusTable.text([try Self.report(daemon: Self.daemon())], now: Self.now)
        #expect(!running.contains("paused"))
    }

    @Test func refusedCredentialsSayWhyWithTheLastRefusal() throws {
        var state = Self.daemon(paused: .rejected)
        state.lastError = "HTTP 401 Unauthorized"
        let text = StatusTable.text([try Self.report(daemon: state)], now: Self.now)
        #expect(text.contains("\n  paused      rejected: credentials refused"), "\(text)")
        #expect(text.contains("\n  last error  HTTP 401 Unauthorized"), "\(text)")
        #expect(text.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(text)")
    }

    @Test func jsonHasInFlightAndPausedReason() throws {
        func profile(_ daemon: DaemonState?) throws -> [String: Any] {
            let text = StatusJSON.text([try Self.report(daemon: daemon)], now: Self.now)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            return try #require((json["profiles"] as? [String: Any])?["photos"] as? [String: Any])
        }
        let none = try profile(nil)
        #expect((none["in_flight"] as? [Any])?.isEmpty == true)
        #expect(none["paused_reason"] is NSNull)
        let offline = try profile(Self.daemon(paused: .offline, [Self.file("a.bin", 10_485_760, sent: 4_194_304, rate: 1_048_576, eta: 6)]))
        #expect(offline["paused_reason"] as? String == "offline")
        let entry = try #require((offline["in_flight"] as? [[String: Any]])?.first)
        #expect(entry["path"] as? String == "a.bin" && entry["size"] as? Int == 10_485_760 && entry["bytes_sent"] as? Int == 4_194_304)
        #expect(entry["rate_bytes_per_second"] as? Int == 1_048_576 && entry["eta_seconds"] as? Int == 6)
        #expect(entry["started_at"] as? String == "2026-11-29T12:51:00.000Z")
        let stalled = try profile(Self.daemon([Self.file("b.bin", 10, sent: 0, rate: 0, eta: nil)]))
        #expect((stalled["in_flight"] as? [[String: Any]])?.first?["eta_seconds"] is NSNull)
    }

    @Test func aStateFileFromBeforeTheLiveViewStillReads() throws {
        let old = #"{"pid": 7, "reachable": true, "refused": 0, "updated_at": "2026-11-29T12:51:19.000Z"}"#
        let state = try JSONDecoder().decode(DaemonState.self, from: Data(old.utf8))
        #expect(state.inFlight.isEmpty && state.pausedReason == nil && state.pid == 7)
        let now = Self.daemon(paused: .offline, [Self.file("a", 1, sent: 0, rate: 0, eta: nil)])
        #expect(try JSONDecoder().decode(DaemonState.self, from: JSONEncoder().encode(now)) == now)
    }
}
