import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig

/// DESIGN §8's keys: what `order`, `upload_window`, `max_rate` timetables and `interfaces`
/// accept, and the `PATH:LINE:` error for each kind of mistake.
@Suite struct ConfigPolicyTests {
    static let utc = TimeZone(identifier: "UTC")!
    /// 2027-01-15 08:00:00 UTC.
    static let eight = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func theFourKeysAreReadIntoTheProfile() {
        let text = ConfigFixture.profile("""
            order = newest
            upload_window = 22:00-06:00 12:00-13:00
            max_rate = 08:00,512KiB 18:00,10MiB 23:00,off
            interfaces = eth0 wlan0
            """)
        let p = ConfigFixture.config(text)?.profiles.first
        #expect(p?.order == .newest)
        #expect(p?.uploadWindows.description == "22:00-06:00 12:00-13:00")
        #expect(p?.maxRate.description == "08:00,512KiB 18:00,10MiB 23:00,off")
        #expect(p?.interfaces == ["eth0", "wlan0"])
    }

    @Test func defaultsKeepTodaysBehaviour() {
        let p = ConfigFixture.config(ConfigFixture.minimal)?.profiles.first
        #expect(p?.order == .oldest && p?.uploadWindows.isAlways == true && p?.maxRate == .constant(0) && p?.interfaces == [])
    }

    @Test func eachMistakeIsReportedWithItsLine() {
        let path = ConfigFixture.path
        #expect(ConfigFixture.errors(ConfigFixture.profile("order = random")) ==
                ["\(path):4: invalid value \"random\" for order (use oldest, newest, smallest or largest)"])
        #expect(ConfigFixture.errors(ConfigFixture.profile("upload_window = 25:00-06:00")) ==
                ["\(path):4: invalid window \"25:00-06:00\" (use HH:MM-HH:MM, e.g. 22:00-06:00)"])
        #expect(ConfigFixture.errors(ConfigFixture.profile("upload_window = 08:00-08:00")) ==
                ["\(path):4: window \"08:00-08:00\" is empty (leave upload_window empty to upload at any time)"])
        #expect(ConfigFixture.errors(ConfigFixture.profile("max_rate = 18:00,1MiB 08:00,off")) ==
                ["\(path):4: max_rate entry \"08:00,off\" comes after 18:00: list the entries in order of time"])
        #expect(ConfigFixture.errors(ConfigFixture.profile("max_rate = 08:00,1MiB 08:00,off")) ==
                ["\(path):4: max_rate entries 08:00 and \"08:00,off\" overlap: two rates for the same time"])
        #expect(ConfigFixture.errors(ConfigFixture.profile("max_rate = 08:60,1MiB")) ==
                ["\(path):4: invalid timetable entry \"08:60,1MiB\" for max_rate (use HH:MM,RATE, e.g. 08:00,512KiB or 23:00,off)"])
        #expect(ConfigFixture.errors(ConfigFixture.profile("max_rate = 08:00,fast")) ==
                ["\(path):4: invalid rate \"fast\" in max_rate entry \"08:00,fast\" (use a size such as 512KiB, or off)"])
        #expect(ConfigFixture.errors(ConfigFixture.profile("interfaces = eth0 averyveryverylongname0")).count == 1)
    }

    @Test func windowsWrapPastMidnightAndSayWhenTheyNextChange() {
        let night = UploadWindows([.init(start: TimeOfDay(minutes: 22 * 60), end: TimeOfDay(minutes: 6 * 60))])
        let atEight = night.phase(at: Self.eight, in: Self.utc)
        #expect(!atEight.open && atEight.until == Self.eight.addingTimeInterval(14 * 3600))
        let atMidnight = night.phase(at: Self.eight.addingTimeInterval(16 * 3600), in: Self.utc)
        #expect(atMidnight.open && atMidnight.until == Self.eight.addingTimeInterval(22 * 3600))
        #expect(UploadWindows().phase(at: Self.eight, in: Self.utc) == (true, nil))
    }

    @Test func aWindowEndingAt2400ClosesAtMidnight() throws {
        let evening = try UploadWindows.parse("20:00-24:00").get()
        let at21 = evening.phase(at: Self.eight.addingTimeInterval(13 * 3600), in: Self.utc)
        #expect(at21.open && at21.until == Self.eight.addingTimeInterval(16 * 3600))
    }

    @Test func timetableEntriesHoldUntilTheNextAndTheLastWrapsToTheFirst() throws {
        let table = try RateSchedule.parse("08:00,512KiB 18:00,10MiB 23:00,off").get()
        #expect(table.rate(at: Self.eight, in: Self.utc).bytesPerSecond == 512 << 10)
        #expect(table.rate(at: Self.eight, in: Self.utc).until == Self.eight.addingTimeInterval(10 * 3600))
        #expect(table.rate(at: Self.eight.addingTimeInterval(10 * 3600), in: Self.utc).bytesPerSecond == 10 << 20)
        // 03:00 the next day: still the 23:00 entry, which holds until 08:00.
        let three = table.rate(at: Self.eight.addingTimeInterval(19 * 3600), in: Self.utc)
        #expect(three.bytesPerSecond == nil && three.until == Self.eight.addingTimeInterval(24 * 3600))
        #expect(table.limitsSometimes)
        #expect(try RateSchedule.parse("00:00,off").get().limitsSometimes == false)
    }

    @Test func aPlainSizeStillWorks() throws {
        #expect(try RateSchedule.parse("10MiB/s").get() == .constant(10 << 20))
        #expect(try RateSchedule.parse("10MiB").get().rate(at: Self.eight, in: Self.utc) == (10 << 20, nil))
        #expect(try RateSchedule.parse("0").get().limitsSometimes == false)
    }

    @Test func localTimeFollowsTheZoneAcrossADaylightSavingJump() throws {
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        // 2027-03-28 00:30 UTC = 01:30 CET; at 02:00 CET the clocks jump to 03:00 CEST (01:00 UTC).
        let before = Date(timeIntervalSince1970: 1_806_193_800)
        #expect(TimeOfDay.of(before, in: berlin).description == "01:30")
        let three = TimeOfDay(minutes: 180).next(after: before, in: berlin)
        #expect(three == Date(timeIntervalSince1970: 1_806_195_600), "03:00 CEST is 01:00 UTC, 30 minutes later")
    }
}
