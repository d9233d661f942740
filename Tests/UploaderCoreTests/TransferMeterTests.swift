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

/// The rate and ETA `status` shows, from byte counts at given monotonic times.
@Suite struct TransferMeterTests {
    @Test func aSteadyUploadShowsItsRateAndAShrinkingETA() {
        var meter = TransferMeter(size: 10_000_000, startedAt: 100)
        var etas: [Int] = []
        for second in 1...8 {
            meter.record(Int64(second) * 1_000_000, at: 100 + Double(second))
            #expect(abs(meter.rate(at: 100 + Double(second)) - 1_000_000) < 1, "second \(second)")
            etas.append(meter.eta(at: 100 + Double(second)) ?? -1)
        }
        #expect(etas == [9, 8, 7, 6, 5, 4, 3, 2])
    }

    @Test func theRateFollowsTheLastSecondsNotTheWholeUpload() {
        var meter = TransferMeter(size: 100_000_000, startedAt: 0)
        for t in stride(from: 0.5, through: 20, by: 0.5) { meter.record(Int64(t * 4_000_000), at: t) }
        // Then the link slows to 1 MB/s.
        var sent = meter.sent
        for t in stride(from: 20.5, through: 30, by: 0.5) {
            sent += 500_000
            meter.record(sent, at: t)
        }
        #expect(abs(meter.rate(at: 30) - 1_000_000) < 1)
        #expect(meter.eta(at: 30) == Int((Double(100_000_000 - sent) / 1_000_000).rounded(.up)))
    }

    @Test func aStalledUploadLosesItsRateAndHasNoETA() {
        var meter = TransferMeter(size: 10_000, startedAt: 0)
        meter.record(5_000, at: 1)
        #expect(meter.rate(at: 1) > 0)
        #expect(meter.rate(at: 3) < meter.rate(at: 1), "no callback, and still the rate falls")
        #expect(meter.rate(at: 7) == 0)
        #expect(meter.eta(at: 7) == nil)
    }

    @Test func manyCallbacksKeepFewSamples() {
        var meter = TransferMeter(size: 1 << 30, startedAt: 0)
        for i in 1...100_000 { meter.record(Int64(i) * 1000, at: Double(i) / 1000) }
        #expect(meter.samples.count <= Int(TransferMeter.window / TransferMeter.resolution) + 2)
        #expect(abs(meter.rate(at: 100) - 1_000_000) < 1000)
    }

    @Test func whatLeavesInTheFirstSecondIsSpreadOverAWholeSecond() {
        var meter = TransferMeter(size: 10_000_000, startedAt: 0)
        meter.record(1_000_000, at: 0.25)
        #expect(meter.rate(at: 0.25) == 1_000_000, "not 4 MB/s from a quarter second that filled the socket buffer")
        meter.record(2_000_000, at: 2)
        #expect(meter.rate(at: 2) == 1_000_000)
    }

    @Test func theLastByteMeansNoTimeLeft() {
        var meter = TransferMeter(size: 10, startedAt: 0)
        meter.record(10, at: 1)
        #expect(meter.eta(at: 1) == 0)
    }
}
