import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

@Suite struct ConfigValueTests {
    @Test func durationsAcceptEveryUnitAndPlainZero() {
        #expect(ConfigValue.duration("250ms") == 0.25)
        #expect(ConfigValue.duration("30s") == 30)
        #expect(ConfigValue.duration("5m") == 300)
        #expect(ConfigValue.duration("1h") == 3600)
        #expect(ConfigValue.duration("7d") == 604_800)
        #expect(ConfigValue.duration("0") == 0)
        #expect(ConfigValue.duration("1h30m") == 5400)
        #expect(ConfigValue.duration("1.5s") == 1.5)
    }

    @Test func durationsRejectMissingUnitsAndJunk() {
        for bad in ["", "10", "10 parsecs", "s", "-5s", "1y", "1.2.3s", "5m x", "ms", String(repeating: "9", count: 400) + "d"] {
            #expect(ConfigValue.duration(bad) == nil, "\(bad)")
        }
    }

    @Test func durationsPrintInTheirShortestExactForm() {
        #expect(ConfigValue.formatDuration(0) == "0")
        #expect(ConfigValue.formatDuration(0.25) == "250ms")
        #expect(ConfigValue.formatDuration(30) == "30s")
        #expect(ConfigValue.formatDuration(3600) == "1h")
        #expect(ConfigValue.formatDuration(5400) == "90m")
        #expect(ConfigValue.formatDuration(7 * 86400) == "7d")
    }

    @Test func sizesUsePowersOf1024() {
        #expect(ConfigValue.size("512") == 512)
        #expect(ConfigValue.size("64KiB") == 65536)
        #expect(ConfigValue.size("8MiB") == 8 << 20)
        #expect(ConfigValue.size("1GiB") == 1 << 30)
        #expect(ConfigValue.size("2K") == 2048)
        #expect(ConfigValue.size("3M") == 3 << 20)
        #expect(ConfigValue.size("1G") == 1 << 30)
        #expect(ConfigValue.size("1KB") == 1024)
        #expect(ConfigValue.size("0") == 0)
    }

    @Test func sizesRejectJunkAndOverflow() {
        for bad in ["", "KiB", "12 apples", "-1", "1XiB", "99999999999TiB"] {
            #expect(ConfigValue.size(bad) == nil, "\(bad)")
        }
    }

    @Test func sizesPrintInTheirShortestExactForm() {
        #expect(ConfigValue.formatSize(0) == "0")
        #expect(ConfigValue.formatSize(512) == "512")
        #expect(ConfigValue.formatSize(65536) == "64KiB")
        #expect(ConfigValue.formatSize(10 << 20) == "10MiB")
        #expect(ConfigValue.formatSize(1500) == "1500")
    }

    @Test func booleansAcceptTheSixSpellingsInAnyCase() {
        for yes in ["yes", "true", "on", "1", "YES", "On"] { #expect(ConfigValue.boolean(yes) == true) }
        for no in ["no", "false", "off", "0", "No"] { #expect(ConfigValue.boolean(no) == false) }
        #expect(ConfigValue.boolean("maybe") == nil)
    }

    @Test func badValuesInAConfigNameTheKeyTheValueAndAHint() {
        let text = ConfigFixture.profile("connect_timeout = 10 parsecs\nmax_rate = lots\nrecursive = perhaps\nmethod = PATCH\nconcurrency = 0")
        #expect(ConfigFixture.errors(text) == [
            "\(ConfigFixture.path):4: invalid duration \"10 parsecs\" for connect_timeout (use e.g. 250ms, 30s, 5m, 1h, 7d)",
            "\(ConfigFixture.path):5: invalid rate \"lots\" for max_rate (use a size per second, e.g. 512KiB or 10MiB; 0 = no cap; or a timetable such as 08:00,512KiB 23:00,off)",
            "\(ConfigFixture.path):6: invalid boolean \"perhaps\" for recursive (use yes/no, true/false, on/off or 1/0)",
            "\(ConfigFixture.path):7: invalid value \"PATCH\" for method (use PUT or POST)",
            "\(ConfigFixture.path):8: invalid number \"0\" for concurrency (use a whole number from 1 to 1024)",
        ])
    }

    @Test func timeoutsThatMustBePositiveRejectZero() {
        let errors = ConfigFixture.errors(ConfigFixture.profile("connect_timeout = 0"))
        #expect(errors == ["\(ConfigFixture.path):4: connect_timeout must be more than 0 (use e.g. 250ms, 30s, 5m, 1h, 7d)"])
    }

    @Test func maxBackoffBelowBackoffIsAnError() {
        let errors = ConfigFixture.errors(ConfigFixture.profile("backoff = 5m\nmax_backoff = 1m"))
        #expect(errors == ["\(ConfigFixture.path):5: max_backoff (1m) is less than backoff (5m)"])
    }

    @Test func maxRateAcceptsAPerSecondSuffix() {
        let config = ConfigFixture.config(ConfigFixture.profile("max_rate = 10MiB/s"))
        #expect(config?.profiles.first?.maxRate == .constant(10 << 20))
    }
}
