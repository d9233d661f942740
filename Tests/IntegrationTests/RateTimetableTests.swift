import Foundation
import Testing

/// The `max_rate` timetable (#14): the entry holding now sets the cap. Built around the current
/// time (UTC); timings are asserted generously, speed itself is not the point.
@Suite struct RateTimetableTests {
    static func upload(tenMiBWith timetable: String) throws -> TimeInterval {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("r/{name}"), extra: "max_rate = \(timetable)")
        fx.environment = LocalMinutes.environment
        try fx.drop("ten.bin", Data(repeating: 3, count: 10 << 20))
        let started = Date()
        let result = try fx.runOnce()
        let seconds = Date().timeIntervalSince(started)
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(fx.files(in: fx.sent) == ["ten.bin"])
        return seconds
    }

    @Test func aTwoMiBEntryMakesTenMiBTakeAboutFiveSeconds() throws {
        let seconds = try Self.upload(tenMiBWith: LocalMinutes.timetable(now: "2MiB", otherwise: "off"))
        print(String(format: "timetable 2MiB: 10 MiB in %.2f s", seconds))
        #expect(seconds > 3.5 && seconds < 8, "\(seconds) s")
    }

    @Test func anOffEntryMakesItFast() throws {
        let seconds = try Self.upload(tenMiBWith: LocalMinutes.timetable(now: "off", otherwise: "2MiB"))
        print(String(format: "timetable off: 10 MiB in %.2f s", seconds))
        #expect(seconds < 2, "\(seconds) s")
    }
}
