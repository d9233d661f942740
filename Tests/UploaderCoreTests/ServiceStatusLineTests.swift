import Foundation
import Testing
import UploaderValues
@testable import UploaderSpool
@testable import UploaderCore
@testable import UploaderDaemon

/// The systemd `STATUS=` line: what `systemctl status` shows an operator about each profile.
@Suite struct ServiceStatusLineTests {
    private func snapshot(online: Bool = true, paused: PauseReason? = nil) -> ProfileSnapshot {
        var snapshot = ProfileSnapshot()
        snapshot.waiting = 12
        snapshot.inFlight = 1
        snapshot.online = online
        snapshot.pausedReason = paused
        return snapshot
    }

    @Test func eachPauseReasonIsNamedBeforeTheCounts() {
        #expect(ServiceReporter.statusPart("docs", snapshot(online: false, paused: .offline), census: nil)
            == "docs: OFFLINE, 12 queued, 1 uploading")
        #expect(ServiceReporter.statusPart("night", snapshot(paused: .outsideWindow), census: nil)
            == "night: PAUSED outside upload window, 12 queued, 1 uploading")
        #expect(ServiceReporter.statusPart("lte", snapshot(paused: .interface), census: nil)
            == "lte: PAUSED route by an interface not allowed, 12 queued, 1 uploading")
    }

    @Test func aProfileFreeToUploadShowsItsCountsAndRetryCensus() {
        var census = SpoolCensus()
        census.retry.files = 2
        census.failed.files = 1
        #expect(ServiceReporter.statusPart("photos", snapshot(), census: census)
            == "photos: 12 queued, 1 uploading, 2 in retry, 1 failed")
    }
}
